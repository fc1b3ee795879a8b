"""The offline query router at inference: numpy over a JSON artefact.

The model is TF-IDF features and two logistic regressions. Its artefact is plain JSON
(vocabularies, idf, coefficients, intercepts, calibration temperatures), never pickle, so
loading it cannot run code; this module rebuilds the linear predict path with numpy and
never imports scikit-learn, which only `training.py` needs to fit and write the artefact.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from apps.answers.routing.features import (
    CHAR_NGRAM_RANGE,
    HAND_FEATURE_NAMES,
    MAX_FEATURE_CHARS,
    WORD_NGRAM_RANGE,
    char_ngrams,
    decompose_query,
    feature_text,
    hand_features,
    is_follow_up_fragment,
    word_ngrams,
)
from apps.answers.routing.policy import EMPTY_QUERY_REASON, fallback_classification
from apps.answers.routing.types import (
    STRATEGY_FOR_TIER,
    TIER_ORDER,
    Classification,
    HistoryMessage,
    Intent,
    Tier,
)
from apps.answers.routing.window import conversation_window
from apps.corpus.text import detect_language

DEFAULT_ARTEFACT_PATH = Path(__file__).resolve().parent / "data" / "router_model.json"
ARTEFACT_FORMAT = "ragplatform.query-router.v1"
# Part of the feature code an artefact must match (see feature_config); chosen with
# training.REGULARISATION_C by 5-fold cross-validation on the train split only.
HAND_FEATURE_WEIGHT = 1.5
# A follow-up fragment this unsure of itself takes its intent from the conversation.
FOLLOW_UP_CONFIDENCE = 0.7


@dataclass(frozen=True)
class _TfidfBlock:
    index: Mapping[str, int]
    idf: np.ndarray

    def transform(self, grams: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Sparse (indices, values): sublinear tf times idf, L2-normalised, like sklearn."""
        counts = Counter(self.index[g] for g in grams if g in self.index)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        indices = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tf = 1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))
        values = tf * self.idf[indices]
        return indices, values / np.linalg.norm(values)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> _TfidfBlock:
        terms = list(data["terms"])
        idf = np.asarray(data["idf"], dtype=np.float64)
        if len(terms) != len(idf):
            raise ValueError("vocabulary and idf differ in length")
        return cls(index={term: i for i, term in enumerate(terms)}, idf=idf)


@dataclass(frozen=True)
class _LinearHead:
    labels: tuple[str, ...]
    coef: np.ndarray
    intercept: np.ndarray
    temperature: float

    def probabilities(self, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
        logits = (self.coef[:, indices] @ values + self.intercept) / self.temperature
        exp = np.exp(logits - logits.max())
        return exp / exp.sum()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], n_features: int) -> _LinearHead:
        coef = np.asarray(data["coef"], dtype=np.float64)
        labels = tuple(data["labels"])
        if coef.shape != (len(labels), n_features) or len(data["intercept"]) != len(labels):
            raise ValueError("coefficient shape does not match the vocabulary")
        temperature = float(data["temperature"])
        if not temperature > 0:
            raise ValueError("temperature must be positive")
        return cls(labels, coef, np.asarray(data["intercept"], dtype=np.float64), temperature)


@dataclass(frozen=True)
class RouterPrediction:
    intent_probabilities: Mapping[Intent, float]
    tier_probabilities: Mapping[Tier, float]

    @property
    def intent(self) -> Intent:
        return max(self.intent_probabilities, key=self.intent_probabilities.__getitem__)

    @property
    def confidence(self) -> float:
        return self.intent_probabilities[self.intent]


@dataclass(frozen=True)
class RouterModel:
    """The numpy predict path rebuilt from a JSON artefact."""

    char: _TfidfBlock
    word: _TfidfBlock
    hand_weight: float
    intent_head: _LinearHead
    tier_head: _LinearHead
    dataset_sha256: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RouterModel:
        if data.get("format") != ARTEFACT_FORMAT:
            raise ValueError(f"not a {ARTEFACT_FORMAT} artefact")
        if data["features"] != feature_config():
            # A model trained on other features would load but predict nonsense.
            raise ValueError("artefact was trained with different feature code; retrain")
        char, word = _TfidfBlock.from_json(data["char"]), _TfidfBlock.from_json(data["word"])
        n_features = len(char.idf) + len(word.idf) + len(HAND_FEATURE_NAMES)
        return cls(
            char=char,
            word=word,
            hand_weight=float(data["features"]["hand_weight"]),
            intent_head=_LinearHead.from_json(data["intent"], n_features),
            tier_head=_LinearHead.from_json(data["tier"], n_features),
            dataset_sha256=str(data["dataset_sha256"]),
        )

    def vectorise(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        normalized = feature_text(text)
        char_idx, char_val = self.char.transform(char_ngrams(normalized))
        word_idx, word_val = self.word.transform(word_ngrams(normalized))
        offset = len(self.char.idf) + len(self.word.idf)
        hand = np.asarray(hand_features(normalized)) * self.hand_weight
        hand_idx = np.arange(offset, offset + len(hand), dtype=np.int64)
        indices = np.concatenate([char_idx, word_idx + len(self.char.idf), hand_idx])
        return indices, np.concatenate([char_val, word_val, hand])

    def predict(self, text: str) -> RouterPrediction:
        indices, values = self.vectorise(text)
        intents = self.intent_head.probabilities(indices, values)
        tiers = self.tier_head.probabilities(indices, values)
        return RouterPrediction(
            intent_probabilities={
                Intent(label): float(p)
                for label, p in zip(self.intent_head.labels, intents, strict=True)
            },
            tier_probabilities={
                Tier(label): float(p) for label, p in zip(self.tier_head.labels, tiers, strict=True)
            },
        )


def feature_config() -> dict[str, Any]:
    """What an artefact records of the feature code it was trained with; loading compares."""
    return {
        "char_ngram_range": list(CHAR_NGRAM_RANGE),
        "word_ngram_range": list(WORD_NGRAM_RANGE),
        "max_chars": MAX_FEATURE_CHARS,
        "hand_features": list(HAND_FEATURE_NAMES),
        "hand_weight": HAND_FEATURE_WEIGHT,
        "sublinear_tf": True,
    }


class TrainedClassifier:
    name = "trained"

    def __init__(self, model: RouterModel, *, follow_up_confidence: float = FOLLOW_UP_CONFIDENCE):
        self.model = model
        self.follow_up_confidence = follow_up_confidence

    @classmethod
    def from_artefact(cls, path: Path = DEFAULT_ARTEFACT_PATH) -> TrainedClassifier:
        return cls(RouterModel.from_json(json.loads(Path(path).read_text(encoding="utf-8"))))

    async def classify(self, *, query: str, history: Sequence[HistoryMessage]) -> Classification:
        # About a millisecond of numpy: cheaper inline than a hop to a thread.
        return self.classify_sync(query=query, history=history)

    def classify_sync(
        self, *, query: str, history: Sequence[HistoryMessage] = ()
    ) -> Classification:
        if not query.strip():
            return fallback_classification(query=query, reason=EMPTY_QUERY_REASON)
        prediction = self.model.predict(query)
        intent, confidence = prediction.intent, prediction.confidence
        reasoning = f"intent {intent} p={confidence:.2f}"
        inherited = False
        if confidence < self.follow_up_confidence and is_follow_up_fragment(query):
            context = self._context_prediction(history)
            if context is not None and context.intent is not Intent.CONVERSATIONAL:
                inherited = True
                intent, confidence = context.intent, context.confidence
                reasoning += f"; follow-up fragment: inherits {intent} from the previous question"
        tier = _choose_tier(prediction.tier_probabilities, intent)
        steps = () if inherited else decompose_query(query, intent)
        return Classification(
            intent=intent,
            confidence=round(min(max(confidence, 0.0), 1.0), 4),
            tier=tier,
            strategy=STRATEGY_FOR_TIER[tier],
            decomposed_steps=steps,
            language=detect_language(query),
            reasoning=f"{reasoning}; tier {tier} p={prediction.tier_probabilities[tier]:.2f}",
            classifier=self.name,
        )

    def _context_prediction(self, history: Sequence[HistoryMessage]) -> RouterPrediction | None:
        """The prediction for the latest earlier user message that stands on its own."""
        for message in reversed(conversation_window(history)):
            if message.role == "user" and message.text.strip():
                if is_follow_up_fragment(message.text):
                    continue
                return self.model.predict(message.text)
        return None


def _choose_tier(probabilities: Mapping[Tier, float], intent: Intent) -> Tier:
    # Chit-chat never retrieves; anything else retrieves at least once, and a
    # comparison needs at least one retrieval per side.
    if intent is Intent.CONVERSATIONAL:
        return Tier.T0
    floor = Tier.T2 if intent is Intent.COMPARISON else Tier.T1
    allowed = TIER_ORDER[TIER_ORDER.index(floor) :]
    return max(allowed, key=lambda tier: probabilities.get(tier, 0.0))
