"""Run a BEIR-layout query set through the retrieval pipeline and score it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync

from apps.answers.evaluation.beir import BeirQuery, corpus_id_from_filename
from apps.answers.evaluation.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k
from apps.answers.retrieval.pipeline import Retriever
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.routing.types import Strategy
from apps.corpus.search.legs import SearchFilters


@dataclass
class RetrievalScores:
    ndcg_at_10: list[float] = field(default_factory=list)
    recall_at_100: list[float] = field(default_factory=list)
    mrr_at_10: list[float] = field(default_factory=list)
    # Every relevant document in the first ten: what a multi-hop answer needs.
    all_gold_at_10: list[bool] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)  # per query, 0 when the set does not say
    latency_ms: list[float] = field(default_factory=list)

    def summary(self, **extra: Any) -> dict[str, Any]:
        count = len(self.ndcg_at_10) or 1
        return {
            "ndcg@10": round(sum(self.ndcg_at_10) / count, 4),
            "recall@100": round(sum(self.recall_at_100) / count, 4),
            "mrr@10": round(sum(self.mrr_at_10) / count, 4),
            "all_gold@10": round(sum(self.all_gold_at_10) / count, 4),
            "all_gold@10_by_hops": self._all_gold_by_hops(),
            "queries": len(self.ndcg_at_10),
            "latency_ms_p50": round(percentile(self.latency_ms, 50), 2),
            "latency_ms_p95": round(percentile(self.latency_ms, 95), 2),
            **extra,
        }

    def _all_gold_by_hops(self) -> dict[str, float]:
        groups: dict[int, list[bool]] = {}
        for hops, ok in zip(self.hops, self.all_gold_at_10, strict=True):
            if hops:
                groups.setdefault(hops, []).append(ok)
        return {str(h): round(sum(v) / len(v), 4) for h, v in sorted(groups.items())}


def query_hops(query: BeirQuery) -> int:
    """The hop count a multi-hop set gives a question (0 when it gives none)."""
    hops = query.extra.get("hops")
    return hops if isinstance(hops, int) else 0


def documents_ranked(chunks: Sequence[Any]) -> list[str]:
    """Chunk ranking -> document ranking (a document ranks at its best chunk)."""
    return list(dict.fromkeys(corpus_id_from_filename(c.filename) for c in chunks))


def retrieval_evaluate(
    *,
    retriever: Retriever,
    queries: Sequence[BeirQuery],
    filters: SearchFilters,
    strategy: Strategy = Strategy.SIMPLE,
    progress: Callable[[int], None] | None = None,
) -> RetrievalScores:
    """Latency excludes the query embedding (computed first, passed in), as the target says."""
    scores = RetrievalScores()
    retrieve = async_to_sync(retriever.retrieve)
    for done, query in enumerate(q for q in queries if q.relevant):
        embedding = tuple(retriever.embedder.embed_query(query.text).tolist())
        start = time.perf_counter()
        result = retrieve(
            RetrievalRequest(
                query=query.text, filters=filters, strategy=strategy, query_embedding=embedding
            )
        )
        scores.latency_ms.append((time.perf_counter() - start) * 1000)
        ranked = documents_ranked(result.chunks)
        scores.ndcg_at_10.append(ndcg_at_k(ranked, query.relevant, 10))
        scores.recall_at_100.append(recall_at_k(ranked, query.relevant, 100))
        scores.mrr_at_10.append(mrr_at_k(ranked, query.relevant, 10))
        scores.all_gold_at_10.append(set(query.relevant) <= set(ranked[:10]))
        scores.hops.append(query_hops(query))
        if progress:
            progress(done + 1)
    return scores
