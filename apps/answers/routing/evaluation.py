"""Measure a query classifier on a labelled set: accuracy, macro-F1, confusion, latency.

Two data sets live in `data/`:

- `labelled_queries.jsonl`: hand-written queries with a fixed train/test split
  (about 75/25, stratified by intent and language). The trained router learns from
  `train` only; `test` is the held-out score.
- `unseen_queries.jsonl`: written after the labelled set and before any classifier
  existed, in different phrasing and on different topics, and never edited since
  to improve a score (`UNSEEN_SHA256` pins its bytes; a test checks it). It shows how
  the router generalises beyond the style of its own training data.

Run `python manage.py evaluate_router --split test` (or `--split unseen`) for a report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from apps.answers.routing.policy import classify_safely
from apps.answers.routing.types import (
    Classification,
    HistoryMessage,
    Intent,
    QueryClassifier,
    Tier,
)
from apps.corpus.text import Language

DATA_DIR = Path(__file__).resolve().parent / "data"
LABELLED_PATH = DATA_DIR / "labelled_queries.jsonl"
UNSEEN_PATH = DATA_DIR / "unseen_queries.jsonl"
UNSEEN_SHA256 = "c3ea90c7aafd332eb8a15a77f1a7dc8a3146060f252e07e81cfa06239b369f1d"
INTENT_LABELS: tuple[str, ...] = tuple(str(intent) for intent in Intent)
SPLITS = frozenset({"train", "test", "unseen"})


@dataclass(frozen=True)
class LabelledQuery:
    text: str
    intent: Intent
    tier: Tier
    language: Language
    split: str
    # The earlier user message a follow-up fragment continues ("" for standalone queries).
    context: str = ""

    @property
    def history(self) -> tuple[HistoryMessage, ...]:
        return (HistoryMessage(role="user", text=self.context),) if self.context else ()


def load_examples(path: Path, split: str | None = None) -> tuple[LabelledQuery, ...]:
    """Read a JSONL set, keeping only `split` when given; bad lines raise ValueError."""
    examples = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            example = _parse_example(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from exc
        if split is None or example.split == split:
            examples.append(example)
    return tuple(examples)


def _parse_example(row: Mapping[str, object]) -> LabelledQuery:
    text, language, split = str(row["text"]), Language(str(row["language"])), str(row["split"])
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}")
    intent, tier = Intent(str(row["intent"])), Tier(str(row["tier"]))
    context = str(row.get("context", ""))
    return LabelledQuery(
        text=text, intent=intent, tier=tier, language=language, split=split, context=context
    )


@dataclass(frozen=True)
class ClassMetrics:
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True)
class ReliabilityBin:
    lower: float
    upper: float
    count: int
    mean_confidence: float
    accuracy: float


@dataclass(frozen=True)
class ExamplePrediction:
    text: str
    gold_intent: Intent
    predicted_intent: Intent
    gold_tier: Tier
    predicted_tier: Tier
    confidence: float
    latency_ms: float

    @classmethod
    def of(
        cls, example: LabelledQuery, result: Classification, *, latency_ms: float
    ) -> ExamplePrediction:
        return cls(
            text=example.text,
            gold_intent=example.intent,
            predicted_intent=result.intent,
            gold_tier=example.tier,
            predicted_tier=result.tier,
            confidence=result.confidence,
            latency_ms=latency_ms,
        )


@dataclass(frozen=True)
class RouterEvaluationResult:
    classifier: str
    accuracy: float
    macro_f1: float
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    per_class: Mapping[str, ClassMetrics]
    tier_accuracy: float
    latency_ms_p50: float
    latency_ms_p95: float
    examples: int
    reliability: tuple[ReliabilityBin, ...]
    expected_calibration_error: float
    predictions: tuple[ExamplePrediction, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "accuracy": self.accuracy,
            "macro_f1": self.macro_f1,
            "labels": list(self.labels),
            "confusion": [list(row) for row in self.confusion],
            "latency_ms_p50": self.latency_ms_p50,
            "latency_ms_p95": self.latency_ms_p95,
            "per_class": {
                label: {
                    "precision": metrics.precision,
                    "recall": metrics.recall,
                    "f1": metrics.f1,
                    "support": metrics.support,
                }
                for label, metrics in self.per_class.items()
            },
            "tier_accuracy": self.tier_accuracy,
            "examples": self.examples,
        }


def confusion_matrix(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]
) -> np.ndarray:
    """Rows are gold labels, columns predicted labels, both in `labels` order."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    index = {label: position for position, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for truth, guess in zip(gold, predicted, strict=True):
        matrix[index[truth], index[guess]] += 1
    return matrix


def per_class_metrics(matrix: np.ndarray, labels: Sequence[str]) -> dict[str, ClassMetrics]:
    true_positive = np.diag(matrix).astype(np.float64)
    predicted_count = matrix.sum(axis=0).astype(np.float64)
    support = matrix.sum(axis=1)
    precision = _safe_divide(true_positive, predicted_count)
    recall = _safe_divide(true_positive, support.astype(np.float64))
    f1 = _safe_divide(2 * precision * recall, precision + recall)
    return {
        label: ClassMetrics(
            precision=float(precision[i]),
            recall=float(recall[i]),
            f1=float(f1[i]),
            support=int(support[i]),
        )
        for i, label in enumerate(labels)
    }


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    # An undefined ratio counts as 0, as scikit-learn's zero_division=0 does.
    result = np.zeros_like(numerator, dtype=np.float64)
    np.divide(numerator, denominator, out=result, where=denominator > 0)
    return result


def reliability_table(
    confidences: Sequence[float], correct: Sequence[bool], *, n_bins: int = 5
) -> tuple[ReliabilityBin, ...]:
    """Equal-width confidence bins with their observed accuracy (empty bins omitted)."""
    conf = np.asarray(confidences, dtype=np.float64)
    hits = np.asarray(correct, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # The last bin is closed so that a confidence of exactly 1.0 is counted.
    positions = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, n_bins - 1)
    bins = []
    for b in range(n_bins):
        mask = positions == b
        if mask.any():
            bins.append(
                ReliabilityBin(
                    lower=round(float(edges[b]), 6),
                    upper=round(float(edges[b + 1]), 6),
                    count=int(mask.sum()),
                    mean_confidence=float(conf[mask].mean()),
                    accuracy=float(hits[mask].mean()),
                )
            )
    return tuple(bins)


def expected_calibration_error(bins: Sequence[ReliabilityBin]) -> float:
    total = sum(b.count for b in bins)
    if total == 0:
        return 0.0
    return sum(b.count * abs(b.accuracy - b.mean_confidence) for b in bins) / total


async def router_evaluate(
    *,
    classifier: QueryClassifier,
    examples: Sequence[LabelledQuery],
    timeout_s: float = 10.0,
    n_bins: int = 5,
    use_context: bool = True,
) -> RouterEvaluationResult:
    """Classify every example the way the answer path does (errors become the fallback).

    A follow-up fragment is classified with the message it follows as history, as in
    a real conversation; `use_context=False` shows how it fares alone.
    """
    if not examples:
        raise ValueError("no examples to evaluate")
    predictions = []
    for example in examples:
        history = example.history if use_context else ()
        started = time.perf_counter()
        result = await classify_safely(
            classifier=classifier, query=example.text, history=history, timeout_s=timeout_s
        )
        latency_ms = (time.perf_counter() - started) * 1000
        predictions.append(ExamplePrediction.of(example, result, latency_ms=latency_ms))
    return summarise(classifier_name=classifier.name, predictions=predictions, n_bins=n_bins)


def summarise(
    *, classifier_name: str, predictions: Sequence[ExamplePrediction], n_bins: int = 5
) -> RouterEvaluationResult:
    gold = [p.gold_intent for p in predictions]
    guessed = [p.predicted_intent for p in predictions]
    matrix = confusion_matrix(gold, guessed, INTENT_LABELS)
    per_class = per_class_metrics(matrix, INTENT_LABELS)
    latencies = np.array([p.latency_ms for p in predictions])
    correct = [p.gold_intent == p.predicted_intent for p in predictions]
    bins = reliability_table([p.confidence for p in predictions], correct, n_bins=n_bins)
    return RouterEvaluationResult(
        classifier=classifier_name,
        accuracy=float(np.trace(matrix) / matrix.sum()),
        macro_f1=float(np.mean([m.f1 for m in per_class.values()])),
        labels=INTENT_LABELS,
        confusion=tuple(tuple(int(v) for v in row) for row in matrix),
        per_class=per_class,
        tier_accuracy=float(np.mean([p.gold_tier == p.predicted_tier for p in predictions])),
        latency_ms_p50=float(np.percentile(latencies, 50)),
        latency_ms_p95=float(np.percentile(latencies, 95)),
        examples=len(predictions),
        reliability=bins,
        expected_calibration_error=expected_calibration_error(bins),
        predictions=tuple(predictions),
    )


def format_report(result: RouterEvaluationResult) -> str:
    lines = [
        f"classifier {result.classifier}: {result.examples} examples",
        f"accuracy {result.accuracy:.3f}  macro-F1 {result.macro_f1:.3f}  "
        f"tier accuracy {result.tier_accuracy:.3f}",
        f"latency p50 {result.latency_ms_p50:.2f} ms  p95 {result.latency_ms_p95:.2f} ms",
        "",
        f"{'intent':<18}{'precision':>10}{'recall':>10}{'f1':>10}{'support':>10}",
    ]
    for label, m in result.per_class.items():
        lines.append(
            f"{label:<18}{m.precision:>10.3f}{m.recall:>10.3f}{m.f1:>10.3f}{m.support:>10}"
        )
    short = [label[:8] for label in result.labels]
    lines += [
        "",
        "confusion (rows gold, columns predicted)",
        " " * 18 + "".join(f"{s:>10}" for s in short),
    ]
    for label, row in zip(result.labels, result.confusion, strict=True):
        lines.append(f"{label:<18}" + "".join(f"{v:>10}" for v in row))
    lines += ["", f"reliability (ECE {result.expected_calibration_error:.3f})"]
    lines.append(f"{'confidence':<14}{'count':>8}{'mean conf':>12}{'accuracy':>10}")
    for b in result.reliability:
        lines.append(
            f"{b.lower:.1f}-{b.upper:.1f}{'':<7}{b.count:>8}{b.mean_confidence:>12.3f}{b.accuracy:>10.3f}"
        )
    return "\n".join(lines)
