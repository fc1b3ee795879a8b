"""Training the offline query router: scikit-learn fits, a JSON artefact comes out.

Only this module needs scikit-learn (and scipy); `trained.py` loads what it writes and
predicts with numpy alone. Training is reproducible: one BLAS thread, a fixed seed and
rounded numbers give a byte-identical artefact for the same train split.

Retrain with `python manage.py train_router` after editing the labelled set.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from apps.answers.routing.evaluation import (
    ExamplePrediction,
    LabelledQuery,
    load_examples,
    summarise,
)
from apps.answers.routing.features import char_ngrams, feature_text, hand_features, word_ngrams
from apps.answers.routing.trained import (
    ARTEFACT_FORMAT,
    HAND_FEATURE_WEIGHT,
    TrainedClassifier,
    feature_config,
)

# Chosen with trained.HAND_FEATURE_WEIGHT by 5-fold cross-validation on the train split only.
REGULARISATION_C = 3.0
MIN_DOCUMENT_FREQUENCY = 2
CV_FOLDS = 5
SIGNIFICANT_DIGITS = 6


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
    texts = [feature_text(example.text) for example in train]
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
        "features": feature_config(),
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
