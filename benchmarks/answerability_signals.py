"""How well can offline signals tell answerable from unanswerable questions?

For each question of a set with `is_impossible` labels (PersianQA), runs retrieval and the
extractive composer's evidence step exactly as a turn does, computes the signals a
no-model composer has (evidence, sentence similarity and term overlap, coverage of the
query's terms, the retrieval legs' top scores, the quantity check, negation in the
question, and how much the query's similarity to the best sentence rises when one of its
words is left out: a word the passage does not support), and prints:
  - each signal's AUC for "this question is unanswerable";
  - a logistic regression over all of them fitted on the questions of even-numbered
    passages and scored on the odd-numbered ones (passage-disjoint), with the share of
    unanswerable questions refused when the threshold allows 15% false refusals.
The fitted model is a measurement of the ceiling, not something the product ships: the
set has no train split, and the rule here is to tune on train splits only.

    python benchmarks/answerability_signals.py --dataset DATASETS/persianqa
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
NEGATION = re.compile(r"(?:^|\s)(?:نمی|نیست|ندار|نبود|نکرد|نشد|not|never|cannot)|n't\b")
MAX_FALSE_REFUSALS = 0.15


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    import numpy as np

    from apps.answers.composing.extractive import ExtractiveComposer
    from apps.answers.evaluation.beir import evaluation_collection_load, queries_load
    from apps.answers.providers.registry import providers_default
    from apps.corpus.search.embedders import default_embedder
    from apps.corpus.search.legs import SearchFilters

    providers = providers_default()
    if not isinstance(providers.composer, ExtractiveComposer):
        raise SystemExit("measures the offline default: unset the chat model settings")
    collection, _ = evaluation_collection_load(dataset=args.dataset, workers=0)
    filters = SearchFilters(collection_ids=(collection.pk,))
    queries = [q for q in queries_load(args.dataset, split="test") if "is_impossible" in q.extra]
    queries = queries[: args.limit]
    embedder = default_embedder()
    rows = [
        question_signals(
            q.text,
            retriever=providers.retriever,
            composer=providers.composer,
            filters=filters,
            embedder=embedder,
        )
        for q in queries
    ]
    names = list(rows[0])
    signals = np.array([[row[n] for n in names] for row in rows], dtype=float)
    impossible = np.array([bool(q.extra["is_impossible"]) for q in queries])
    fit_half = np.array([passage_number(q.extra, q.query_id) % 2 == 0 for q in queries])
    print(f"{len(queries)} questions, {int(impossible.sum())} unanswerable")
    for column, name in enumerate(names):
        print(f"  {name:24s} AUC {oriented_auc(signals[:, column], impossible):.3f}")
    report_logistic(signals, impossible, fit_half)
    return 0


def question_signals(
    query: str, *, retriever: Any, composer: Any, filters: Any, embedder: Any
) -> dict[str, float]:
    from asgiref.sync import async_to_sync
    from django.conf import settings

    from apps.answers.composing.answer_type import quantity_unstated
    from apps.answers.composing.terms import content_terms, term_weights, weighted_overlap
    from apps.answers.retrieval.context import context_build
    from apps.answers.retrieval.types import RetrievalRequest

    async def run() -> tuple[Any, Any, Any]:
        result = await retriever.retrieve(RetrievalRequest(query=query, filters=filters))
        budget = settings.RAG_CONTEXT_BUDGET_TOKENS
        context = context_build(chunks=result.chunks, budget_tokens=budget)
        return result, context, await composer.evidence(query=query, context=context)

    result, context, evidence = async_to_sync(run)()
    terms = content_terms(query)
    chunk_terms = [content_terms(c.text) for c in context.chunks]
    weights = term_weights(terms, chunk_terms or [frozenset()])
    top_scored = max(evidence.scored, key=lambda s: s.score, default=None)
    best_chunk = (
        chunk_terms[top_scored.sentence.rank] if top_scored and chunk_terms else frozenset()
    )
    top = result.chunks[0].candidate if result.chunks else None
    # The composer embedded its best sentences already: their vectors are reused, not recomputed.
    best_embedded = max(
        (s for s in evidence.scored if s.vector is not None), key=lambda s: s.score, default=None
    )
    quantity_missing = quantity_unstated(query, (s.sentence.text for s in evidence.chosen))
    return {
        "evidence": evidence.value,
        "best_similarity": max((s.similarity for s in evidence.scored), default=0.0),
        "best_overlap": max((s.overlap for s in evidence.scored), default=0.0),
        "best_chunk_coverage": weighted_overlap(best_chunk, weights),
        "context_coverage": weighted_overlap(frozenset().union(*chunk_terms), weights),
        "top_dense_cosine": (top.dense_score or 0.0) if top else 0.0,
        "top_keyword_score": (top.keyword_score or 0.0) if top else 0.0,
        "quantity_missing": float(quantity_missing),
        "negated_question": float(bool(NEGATION.search(query))),
        "word_left_out_gain": word_left_out_gain(query, best_embedded, embedder=embedder),
    }


def word_left_out_gain(query: str, best: Any, *, embedder: Any) -> float:
    """How much the best embedded sentence's similarity rises when one content word is left out."""
    from apps.answers.composing.terms import content_terms

    tokens = query.split()
    variants = [
        " ".join(tokens[:i] + tokens[i + 1 :]) for i, t in enumerate(tokens) if content_terms(t)
    ]
    if best is None or not variants:
        return 0.0
    full = float(best.vector @ embedder.embed_query(query))
    return max(float(best.vector @ embedder.embed_query(v)) for v in variants) - full


def passage_number(extra: dict[str, object], query_id: str) -> int:
    digits = re.findall(r"\d+", str(extra.get("context_id") or query_id))
    return int(digits[-1]) if digits else 0


def oriented_auc(values: Any, positive: Any) -> float:
    """AUC of the better direction: a signal that falls for unanswerable ones counts too."""
    from sklearn.metrics import roc_auc_score

    auc = float(roc_auc_score(positive, values))
    return max(auc, 1.0 - auc)


def report_logistic(signals: Any, impossible: Any, fit_half: Any) -> None:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    model.fit(signals[fit_half], impossible[fit_half])
    p = model.predict_proba(signals)[:, 1]
    threshold = np.quantile(p[fit_half & ~impossible], 1 - MAX_FALSE_REFUSALS)
    for name, half in (("fit half", fit_half), ("held-out half", ~fit_half)):
        refused = p[half] > threshold
        print(
            f"logistic, {name}: AUC {roc_auc_score(impossible[half], p[half]):.3f}, "
            f"unanswerable refused {refused[impossible[half]].mean():.3f}, "
            f"answerable refused {refused[~impossible[half]].mean():.3f}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
