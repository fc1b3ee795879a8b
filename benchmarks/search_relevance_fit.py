"""Fit the search results' absolute relevance (apps/answers/retrieval/relevance.py).

Every question of each set is searched as the search route searches it (the first pass:
hybrid legs, z-score fusion, no rerank); its first ten documents (each at its best chunk)
become rows: the result's features (its rescaled dense cosine and its keyword reciprocal
rank, `relevance_features`) and whether the document is in the question's qrels. Questions
with no relevant document (PersianQA's unanswerable ones) are kept: their results are the
"nothing matches" the score must show. A logistic regression is fitted on all rows, each set
counting equally whatever its size, with no term for any set. PersianQA is split by passage
as in calibration_fit.py: the questions of every other passage (in sorted order) are fitted
on, the others held out.

Prints the coefficients, then for each set (and the held-out half): the calibration error,
the area under the ROC curve, and at each candidate threshold the share of relevant results
kept and the share of questions without any relevant document whose every result falls below
it ("nothing matches", said rightly), for the fit and for the coefficients shipped now.

The datasets must have been loaded by `evaluate_retrieval` first (collection `beir:NAME`):

    python benchmarks/search_relevance_fit.py \\
        --fit persianqa=DATASETS/persianqa:test parsinlu_train=DATASETS/parsinlu-rc:train
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
DEPTH = 10
HELD_OUT = "persianqa held-out half"


@dataclass(frozen=True)
class Rows:
    features: np.ndarray  # (n, 2)
    relevant: np.ndarray  # (n,) bool
    question: np.ndarray  # (n,) question index, for "nothing matches"
    answerable: np.ndarray  # (questions,) bool


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", required=True, help="NAME=DATASET:SPLIT")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each set")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    sets: dict[str, Rows] = {}
    for spec in args.fit:
        name, _, where = spec.partition("=")
        dataset, _, split = where.partition(":")
        sets.update(_set_rows(name, Path(dataset), split or "test", args.limit))
    fitting = {n: r for n, r in sets.items() if n != HELD_OUT}
    coefficients = _fit(list(fitting.values()))
    intercept, cosine, keyword = coefficients
    print(f"fitted: intercept {intercept:.3f}, cosine {cosine:.3f}, keyword {keyword:.3f}")
    from apps.answers.retrieval.relevance import RELEVANCE

    shipped = np.array([RELEVANCE.intercept, RELEVANCE.cosine_weight, RELEVANCE.keyword_weight])
    for label, beta in (("fitted", coefficients), ("shipped", shipped)):
        print(f"\n{label} coefficients")
        for name, rows in sets.items():
            _report(name, rows, beta)


def _set_rows(name: str, dataset: Path, split: str, limit: int | None) -> dict[str, Rows]:
    from asgiref.sync import async_to_sync

    from apps.answers.evaluation.beir import corpus_id_from_filename, queries_load
    from apps.answers.retrieval.pipeline import Retriever
    from apps.answers.retrieval.relevance import relevance_features
    from apps.answers.retrieval.types import RetrievalRequest
    from apps.corpus.models import Collection, DocumentStatus
    from apps.corpus.search.embedders import default_embedder
    from apps.corpus.search.legs import SearchFilters

    collection = Collection.objects.get(name=f"beir:{dataset.name}")
    filters = SearchFilters(collection_ids=(collection.pk,))
    embedder = default_embedder()
    retrieve = async_to_sync(Retriever(embedder=embedder).retrieve)
    loaded = set(
        collection.documents.filter(status=DocumentStatus.READY).values_list("filename", flat=True)
    )
    # A question without qrels in this split is unlabelled (another split's), unless the set
    # says it has no answer (PersianQA's unanswerable ones).
    queries = [
        q
        for q in queries_load(dataset, split=split)
        if q.relevant or q.extra.get("is_impossible") is True
    ][:limit]
    halves = _persianqa_halves(queries) if name == "persianqa" else None
    grouped: dict[str, list[tuple[list[tuple[float, float]], list[bool], bool]]] = {}
    for query in queries:
        result = retrieve(RetrievalRequest(query=query.text, filters=filters))
        best: dict[str, object] = {}
        for chunk in result.chunks:
            best.setdefault(corpus_id_from_filename(chunk.filename), chunk.candidate)
        top = list(best.items())[:DEPTH]
        features = [relevance_features(c, model_id=embedder.model_id) for _, c in top]  # type: ignore[arg-type]
        labels = [doc in query.relevant for doc, _ in top]
        # A relevant document not loaded (a partly loaded corpus) cannot be found: unanswerable.
        answerable = any(f"{doc}.html" in loaded for doc in query.relevant)
        group = name if halves is None or query.query_id in halves else HELD_OUT
        grouped.setdefault(group, []).append((features, labels, answerable))
    print(f"{name}: {len(queries)} questions searched", file=sys.stderr)
    return {group: _rows(items) for group, items in grouped.items()}


def _persianqa_halves(queries: Sequence[object]) -> set[str]:
    """The questions of every other passage, in sorted order (the fitting half)."""
    passages = sorted({str(q.extra.get("context_id")) for q in queries})  # type: ignore[attr-defined]
    fitting = set(passages[::2])
    return {q.query_id for q in queries if str(q.extra.get("context_id")) in fitting}  # type: ignore[attr-defined]


def _rows(items: Sequence[tuple[list[tuple[float, float]], list[bool], bool]]) -> Rows:
    features: list[tuple[float, float]] = []
    relevant: list[bool] = []
    question: list[int] = []
    for index, (feats, labels, _) in enumerate(items):
        features.extend(feats)
        relevant.extend(labels)
        question.extend([index] * len(feats))
    return Rows(
        np.array(features, dtype=float).reshape(-1, 2),
        np.array(relevant, dtype=bool),
        np.array(question, dtype=int),
        np.array([answerable for _, _, answerable in items], dtype=bool),
    )


def _design(features: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(features), 1)), features])


def _fit(sets: Sequence[Rows], *, ridge: float = 1e-6, steps: int = 50) -> np.ndarray:
    """Weighted logistic regression by Newton steps; each set's rows weigh 1 / its row count."""
    x = np.vstack([_design(r.features) for r in sets])
    y = np.concatenate([r.relevant for r in sets]).astype(float)
    w = np.concatenate([np.full(len(r.relevant), 1.0 / len(r.relevant)) for r in sets])
    beta = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (w * (y - p)) - ridge * beta
        hessian = (x * (w * p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        beta = beta + np.linalg.solve(hessian, gradient)
    return beta


def _report(name: str, rows: Rows, beta: np.ndarray) -> None:
    p = 1.0 / (1.0 + np.exp(-(_design(rows.features) @ beta)))
    unanswerable = ~rows.answerable
    said = []
    for threshold in THRESHOLDS:
        kept = float(np.mean(p[rows.relevant] >= threshold)) if rows.relevant.any() else 0.0
        weak = [
            not np.any(p[rows.question == q] >= threshold) for q in np.flatnonzero(unanswerable)
        ]
        nothing = float(np.mean(weak)) if weak else float("nan")
        said.append(f"{threshold:.1f}: kept {kept:.2f} nothing {nothing:.2f}")
    print(
        f"{name:<26} rows {len(p):>5} relevant {rows.relevant.mean():.3f} "
        f"ECE {_calibration_error(p, rows.relevant):.3f} AUC {_auc(p, rows.relevant):.3f} "
        f"unanswerable {int(unanswerable.sum())}"
    )
    print("    " + " | ".join(said))


def _calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    edges = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += inside.mean() * abs(p[inside].mean() - y[inside].mean())
    return total


def _auc(p: np.ndarray, y: np.ndarray) -> float:
    positives, negatives = p[y], p[~y]
    if not len(positives) or not len(negatives):
        return float("nan")
    order = np.argsort(np.concatenate([positives, negatives]))
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    return float(
        (ranks[: len(positives)].sum() - len(positives) * (len(positives) + 1) / 2)
        / (len(positives) * len(negatives))
    )


if __name__ == "__main__":
    main()
