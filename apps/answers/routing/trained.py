"""The offline query router: TF-IDF features and two logistic regressions.

scikit-learn is used for training only. The artefact is plain JSON (vocabularies,
idf, coefficients, intercepts, calibration temperatures), never pickle, so loading
it cannot run code; inference rebuilds the linear predict path with numpy.

Retrain with `python -m apps.answers.routing.trained` after editing the labelled set.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from apps.answers.routing.evaluation import (
    LABELLED_PATH,
    ExamplePrediction,
    LabelledQuery,
    load_examples,
    summarise,
)
from apps.answers.routing.features import (
    CHAR_NGRAM_RANGE,
    HAND_FEATURE_NAMES,
    MAX_FEATURE_CHARS,
    WORD_NGRAM_RANGE,
    char_ngrams,
    decompose_query,
    detect_language,
    hand_features,
    is_follow_up_fragment,
    normalize_text,
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

DEFAULT_ARTEFACT_PATH = Path(__file__).resolve().parent / "data" / "router_model.json"
DEFAULT_DATASET_PATH = LABELLED_PATH
ARTEFACT_FORMAT = "ragplatform.query-router.v1"
# Chosen by 5-fold cross-validation on the train split only.
HAND_FEATURE_WEIGHT = 1.5
REGULARISATION_C = 3.0
MIN_DOCUMENT_FREQUENCY = 2
CV_FOLDS = 5
SIGNIFICANT_DIGITS = 6
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
        if data["features"] != _feature_config():
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
        normalized = normalize_text(text)
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


def _feature_config() -> dict[str, Any]:
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


@functools.cache
def default_trained_classifier() -> TrainedClassifier:
    """The shipped model, loaded once per process."""
    return TrainedClassifier.from_artefact(DEFAULT_ARTEFACT_PATH)


# --- training (needs scikit-learn) ---------------------------------------------------------


@dataclass(frozen=True)
class TrainingReport:
    artefact_path: str
    artefact_bytes: int
    dataset_sha256: str
    seed: int
    n_train: int
    n_test: int
    n_features: int
    intent_temperature: float
    tier_temperature: float
    test_accuracy: float
    test_macro_f1: float
    test_tier_accuracy: float
    test_expected_calibration_error: float
    test_reliability: tuple[dict[str, float], ...]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def train_router(*, dataset_path: Path, artefact_path: Path, seed: int = 0) -> TrainingReport:
    """Fit on split "train", write the JSON artefact, and score it on split "test"."""
    # Loaded before the thread limit is set: threadpoolctl only limits loaded libraries.
    import sklearn.feature_extraction.text
    import sklearn.linear_model
    import sklearn.model_selection  # noqa: F401
    from threadpoolctl import threadpool_limits

    raw = Path(dataset_path).read_bytes()
    train = load_examples(dataset_path, split="train")
    test = load_examples(dataset_path, split="test")
    if not train:
        raise ValueError(f"{dataset_path} has no training examples")
    # One BLAS thread: faster on a shared machine, and the same sums in the same order.
    with threadpool_limits(limits=1):
        artefact = _fit_artefact(train, seed=seed, dataset_sha256=hashlib.sha256(raw).hexdigest())
    payload = json.dumps(artefact, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    Path(artefact_path).write_bytes(payload.encode("utf-8") + b"\n")
    classifier = TrainedClassifier.from_artefact(Path(artefact_path))
    result = summarise(classifier_name=classifier.name, predictions=_predict_all(classifier, test))
    return TrainingReport(
        artefact_path=str(artefact_path),
        artefact_bytes=Path(artefact_path).stat().st_size,
        dataset_sha256=artefact["dataset_sha256"],
        seed=seed,
        n_train=len(train),
        n_test=len(test),
        n_features=len(classifier.model.intent_head.coef[0]),
        intent_temperature=classifier.model.intent_head.temperature,
        tier_temperature=classifier.model.tier_head.temperature,
        test_accuracy=result.accuracy,
        test_macro_f1=result.macro_f1,
        test_tier_accuracy=result.tier_accuracy,
        test_expected_calibration_error=result.expected_calibration_error,
        test_reliability=tuple(asdict(b) for b in result.reliability),
    )


def _predict_all(
    classifier: TrainedClassifier, examples: Sequence[LabelledQuery]
) -> list[ExamplePrediction]:
    predictions = []
    for example in examples:
        started = time.perf_counter()
        result = classifier.classify_sync(query=example.text, history=example.history)
        latency_ms = (time.perf_counter() - started) * 1000
        predictions.append(ExamplePrediction.of(example, result, latency_ms=latency_ms))
    return predictions


def _fit_artefact(
    train: Sequence[LabelledQuery], *, seed: int, dataset_sha256: str
) -> dict[str, Any]:
    texts = [normalize_text(example.text) for example in train]
    intents = np.array([str(example.intent) for example in train])
    tiers = np.array([str(example.tier) for example in train])
    vectorisers, matrix = _fit_features(texts)
    heads = {}
    for name, labels in (("intent", intents), ("tier", tiers)):
        if len(np.unique(labels)) < 3:
            # Two classes would give one coefficient row, which the predict path does not expect.
            raise ValueError(f"need at least three {name} labels in the training split")
        model = _logistic_regression(name).fit(matrix, labels)
        heads[name] = {
            "labels": [str(label) for label in model.classes_],
            "coef": [_round_all(row) for row in model.coef_],
            "intercept": _round_all(model.intercept_),
            "temperature": _round(_fit_temperature(texts, labels, name=name, seed=seed)),
        }
    char, word = vectorisers
    return {
        "format": ARTEFACT_FORMAT,
        "dataset_sha256": dataset_sha256,
        "seed": seed,
        "n_train": len(train),
        "features": _feature_config(),
        "char": _block_json(char),
        "word": _block_json(word),
        **heads,
    }


def _fit_features(texts: Sequence[str], vectorisers: tuple[Any, Any] | None = None) -> Any:
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer

    if vectorisers is None:
        vectorisers = tuple(
            TfidfVectorizer(analyzer=analyzer, min_df=MIN_DOCUMENT_FREQUENCY, sublinear_tf=True)
            for analyzer in (char_ngrams, word_ngrams)
        )
        blocks = [v.fit_transform(texts) for v in vectorisers]
    else:
        blocks = [v.transform(texts) for v in vectorisers]
    hand = np.array([hand_features(text) for text in texts]) * HAND_FEATURE_WEIGHT
    return vectorisers, sparse.hstack([*blocks, sparse.csr_matrix(hand)]).tocsr()


def _logistic_regression(name: str) -> Any:
    from sklearn.linear_model import LogisticRegression

    # Tiers are imbalanced (few T3); intents are balanced by construction.
    weight = "balanced" if name == "tier" else None
    return LogisticRegression(C=REGULARISATION_C, max_iter=5000, class_weight=weight)


def _fit_temperature(texts: Sequence[str], labels: np.ndarray, *, name: str, seed: int) -> float:
    """Temperature scaling on out-of-fold logits, so confidence means what it says."""
    from sklearn.model_selection import StratifiedKFold

    logits = np.zeros((len(texts), len(np.unique(labels))))
    folds = StratifiedKFold(n_splits=CV_FOLDS, shuffle=True, random_state=seed)
    for fit_idx, held_idx in folds.split(np.zeros(len(labels)), labels):
        vectorisers, fit_matrix = _fit_features([texts[i] for i in fit_idx])
        model = _logistic_regression(name).fit(fit_matrix, labels[fit_idx])
        _, held_matrix = _fit_features([texts[i] for i in held_idx], vectorisers)
        logits[held_idx] = model.decision_function(held_matrix)
    classes = np.unique(labels)
    target = np.searchsorted(classes, labels)
    grid = np.exp(np.linspace(math.log(0.05), math.log(5.0), 301))
    losses = [_negative_log_likelihood(logits / t, target) for t in grid]
    return float(grid[int(np.argmin(losses))])


def _negative_log_likelihood(logits: np.ndarray, target: np.ndarray) -> float:
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(target)), target].mean())


def _block_json(vectoriser: Any) -> dict[str, list[Any]]:
    terms = sorted(vectoriser.vocabulary_, key=vectoriser.vocabulary_.__getitem__)
    return {"terms": terms, "idf": _round_all(vectoriser.idf_)}


def _round(value: float) -> float:
    # Rounded so that the artefact is byte-stable and small; 6 digits cost no accuracy.
    return float(f"{float(value):.{SIGNIFICANT_DIGITS}g}")


def _round_all(values: Any) -> list[float]:
    return [_round(v) for v in values]


def main() -> int:
    report = train_router(dataset_path=DEFAULT_DATASET_PATH, artefact_path=DEFAULT_ARTEFACT_PATH)
    print(json.dumps(report.as_dict(), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
