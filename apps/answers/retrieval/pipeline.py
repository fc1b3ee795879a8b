"""The retrieval pipeline: variants -> legs -> fusion -> merge -> rerank -> hydrate.

Configuration is validated once at construction; each stage is timed into the trace.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Literal, get_args

import numpy as np

from apps.answers.providers.chat import ChatModel
from apps.answers.retrieval.expansion import bridging_query, hyde_passage
from apps.answers.retrieval.fusion import (
    FUSION_METHODS,
    FusionMethod,
    candidates_interleave,
    candidates_merge,
    candidates_prefer,
    rrf_fuse,
    zscore_fuse,
)
from apps.answers.retrieval.multihop import bridges_find
from apps.answers.retrieval.rerank import NoReranker, Reranker
from apps.answers.retrieval.types import (
    Bridge,
    Candidate,
    QueryVariant,
    RetrievalRequest,
    RetrievalResult,
    RetrievalTrace,
    RetrievedChunk,
)
from apps.answers.routing.types import Strategy
from apps.corpus.search.embedders import Embedder, EmbedderError
from apps.corpus.search.legs import (
    KeywordPruning,
    KeywordQuery,
    KeywordScoring,
    ScoredChunk,
    chunks_dense_search,
    chunks_hydrate,
    chunks_keyword_search,
)
from ragplatform.db_threads import db_call

Mode = Literal["hybrid", "dense", "keyword"]
MODES: tuple[Mode, ...] = get_args(Mode)
KEYWORD_SCORINGS: tuple[KeywordScoring, ...] = get_args(KeywordScoring)
MAX_QUERY_CHARS = 2000  # longer input is cut: no passage is that long, and it bounds the SQL

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrievalConfig:
    mode: Mode = "hybrid"
    dense_k: int = 100
    keyword_k: int = 100
    final_k: int = 20
    fusion: FusionMethod = "zscore"
    # The dense leg's share of a z-score fusion (RAG_FUSION_DENSE_SHARE in the product); see
    # docs/benchmarks.md for how it was chosen.
    dense_share: float = 0.6
    # rrf_k also spaces the merge of query variants (HyDE, hops, rewrites), whatever `fusion`.
    rrf_k: int = 20  # chosen on SciFact train (0.721 vs 0.717 at 60); see docs/benchmarks.md
    dense_weight: float = 1.0  # rrf fusion only
    keyword_weight: float = 1.0  # rrf fusion only
    keyword_scoring: KeywordScoring = "bm25"
    # None reads every posting of every query term (exact BM25); see keyword_pruned.py.
    keyword_pruning: KeywordPruning | None = None
    ef_search: int = 100
    rerank_depth: int = 30
    max_hops: int = 2
    expansion_timeout_s: float = 8.0
    hyde_max_tokens: int = 160
    bridge_max_tokens: int = 48
    # A follow-up's own words against its rewrite: 0.8 puts the fragment's best passage
    # level with the rewrite's sixth (at rrf_k 20; see candidates_prefer).
    fragment_weight: float = 0.8

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown retrieval mode {self.mode!r}")
        if self.fusion not in FUSION_METHODS:
            raise ValueError(f"unknown fusion {self.fusion!r}")
        if not 0 <= self.dense_share <= 1:
            raise ValueError("dense_share must be between 0 and 1")
        if self.keyword_scoring not in KEYWORD_SCORINGS:
            raise ValueError(f"unknown keyword scoring {self.keyword_scoring!r}")
        if min(self.dense_k, self.keyword_k, self.final_k, self.rrf_k, self.ef_search) < 1:
            raise ValueError("k values and ef_search must be positive")
        if not 1 <= self.max_hops <= 3:
            raise ValueError("max_hops must be between 1 and 3")
        if not 0 <= self.fragment_weight <= 1:
            raise ValueError("fragment_weight must be between 0 and 1")
        if self.dense_weight < 0 or self.keyword_weight < 0:
            raise ValueError("fusion weights must not be negative")


class Retriever:
    def __init__(
        self,
        *,
        embedder: Embedder,
        config: RetrievalConfig | None = None,
        reranker: Reranker | None = None,
        chat: ChatModel | None = None,
    ) -> None:
        self.config = config or RetrievalConfig()
        self.embedder = embedder
        self.reranker = reranker or NoReranker()
        self.chat = chat

    async def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        trace = RetrievalTrace(
            models={"embedder": self.embedder.model_id, "reranker": self.reranker.name},
            settings={
                "mode": self.config.mode,
                "strategy": request.strategy,
                "fusion": self.config.fusion,
                "dense_share": self.config.dense_share,
            },
        )
        query = request.query.strip()[:MAX_QUERY_CHARS]
        trace.variants.append(QueryVariant("original", query))
        vectors: dict[str, tuple[float, ...]] = {}
        original = await self._original(query, request, trace, vectors)
        if request.rewrite is not None:
            # Expansion and reranking read the standalone query; a fragment says too little.
            query = request.rewrite.query.strip()[:MAX_QUERY_CHARS]
        lists = [original]
        if request.strategy in (Strategy.MODERATE, Strategy.COMPLEX):
            lists.extend(await self._hyde(query, request, trace))
        candidates = candidates_merge(lists, k=self.config.rrf_k)
        bridges: tuple[Bridge, ...] = ()
        if request.strategy == Strategy.COMPLEX:
            candidates, bridges = await self._hops(query, request, candidates, trace)
        chunks = await self._finish(query, candidates, trace)
        made = tuple(vectors.items())
        return RetrievalResult(
            tuple(chunks), trace, tuple(original), request.rewrite, bridges, query_vectors=made
        )

    async def _original(
        self,
        query: str,
        request: RetrievalRequest,
        trace: RetrievalTrace,
        vectors: dict[str, tuple[float, ...]],
    ) -> list[Candidate]:
        rewrite = request.rewrite
        if rewrite is not None:
            trace.variants.append(QueryVariant("rewrite", rewrite.query))
            trace.settings["rewrite_method"] = rewrite.method
        if request.original_candidates is not None:
            trace.settings["original_reused"] = True
            return list(request.original_candidates)
        own = await self._variant(query, request, trace, "original", vectors=vectors)
        if rewrite is None:
            return own
        text = rewrite.query.strip()[:MAX_QUERY_CHARS]
        standalone = await self._variant(text, request, trace, "rewrite", vectors=vectors)
        return candidates_prefer(
            standalone, own, weight=self.config.fragment_weight, k=self.config.rrf_k
        )

    async def _variant(
        self,
        text: str,
        request: RetrievalRequest,
        trace: RetrievalTrace,
        kind: str,
        *,
        vectors: dict[str, tuple[float, ...]] | None = None,
    ) -> list[Candidate]:
        """`vectors` collects the query embeddings made, by text, for the result."""
        if not text:
            return []
        dense: list[ScoredChunk] = []
        keyword: list[ScoredChunk] = []
        if self.config.mode != "keyword":
            dense = await self._dense(text, request, trace, kind, vectors)
        if self.config.mode != "dense":
            with _timed(trace, f"keyword:{kind}"):
                keyword = await db_call(chunks_keyword_search, lane="search")(
                    query=KeywordQuery.from_text(text),
                    filters=request.filters,
                    limit=self.config.keyword_k,
                    scoring=self.config.keyword_scoring,
                    pruning=self.config.keyword_pruning,
                )
        with _timed(trace, f"fusion:{kind}"):
            return self._fused(dense, keyword, kind)

    def _fused(
        self, dense: Sequence[ScoredChunk], keyword: Sequence[ScoredChunk], kind: str
    ) -> list[Candidate]:
        if self.config.fusion == "rrf":
            return rrf_fuse(
                dense=dense,
                keyword=keyword,
                k=self.config.rrf_k,
                dense_weight=self.config.dense_weight,
                keyword_weight=self.config.keyword_weight,
                variant=kind,
            )
        return zscore_fuse(
            dense=dense, keyword=keyword, dense_share=self.config.dense_share, variant=kind
        )

    async def _dense(
        self,
        text: str,
        request: RetrievalRequest,
        trace: RetrievalTrace,
        kind: str,
        vectors: dict[str, tuple[float, ...]] | None,
    ) -> list[ScoredChunk]:
        try:
            vector = await self._embed(text, request, trace, kind)
            if vectors is not None:
                vectors[text] = tuple(vector)
        except EmbedderError as exc:
            # The keyword leg still answers; the trace says why meaning played no part.
            logger.warning("Dense search skipped, the embedder failed: %s", exc)
            trace.models["embedder_error"] = str(exc)[:300]
            return []
        with _timed(trace, f"dense:{kind}"):
            return await db_call(chunks_dense_search, lane="search")(
                embedding=vector,
                filters=request.filters,
                limit=self.config.dense_k,
                ef_search=self.config.ef_search,
                model_id=self.embedder.model_id,
            )

    async def _embed(
        self, text: str, request: RetrievalRequest, trace: RetrievalTrace, kind: str
    ) -> list[float]:
        if kind == "original" and request.query_embedding is not None:
            return list(request.query_embedding)
        with _timed(trace, f"embed:{kind}"):
            if kind == "hyde":
                vector = (await db_call(self.embedder.embed_passages, lane="search")([text]))[0]
            else:
                vector = await db_call(self.embedder.embed_query, lane="search")(text)
        return np.asarray(vector, dtype=np.float32).tolist()

    async def _hyde(
        self, query: str, request: RetrievalRequest, trace: RetrievalTrace
    ) -> list[list[Candidate]]:
        if self.chat is None:
            trace.variants.append(QueryVariant("hyde", "", skipped_reason="no chat model"))
            return []
        if self.config.mode == "keyword":
            trace.variants.append(QueryVariant("hyde", "", skipped_reason="keyword mode"))
            return []
        with _timed(trace, "hyde:generate"):
            passage = await hyde_passage(
                self.chat,
                query=query,
                timeout_s=self.config.expansion_timeout_s,
                max_tokens=self.config.hyde_max_tokens,
            )
        if not passage:
            trace.variants.append(QueryVariant("hyde", "", skipped_reason="chat model failed"))
            return []
        trace.variants.append(QueryVariant("hyde", passage))
        trace.models["hyde"] = self.chat.name
        return [await self._variant(passage, request, trace, "hyde")]

    async def _hops(
        self,
        query: str,
        request: RetrievalRequest,
        candidates: list[Candidate],
        trace: RetrievalTrace,
    ) -> tuple[list[Candidate], tuple[Bridge, ...]]:
        """Each hop reads the previous hop's best passages and searches what they lead to."""
        lists, latest, bridges = [candidates], candidates, []
        for hop in range(1, self.config.max_hops):
            found = await self._hydrated(latest[:5])
            hop_lists, hop_bridges = await self._hop(query, request, found, trace, hop)
            if not hop_lists:
                break
            lists.extend(hop_lists)
            bridges.extend(hop_bridges)
            latest = candidates_interleave(hop_lists)
        return candidates_interleave(lists), tuple(bridges)

    async def _hop(
        self,
        query: str,
        request: RetrievalRequest,
        found: list[RetrievedChunk],
        trace: RetrievalTrace,
        hop: int,
    ) -> tuple[list[list[Candidate]], list[Bridge]]:
        """One hop's searches: each bridge entity offline (feedback terms when the passages
        name none), or the chat model's query for what is still missing."""
        kind = f"hop-{hop}"
        bridges = [] if self.chat else bridges_find(query=query, found=found)
        if bridges:
            trace.settings[f"{kind}:made_by"] = "bridge"
            trace.settings[f"{kind}:bridges"] = [b.entity for b in bridges]
            texts = [b.query for b in bridges]
        else:
            text, how = await bridging_query(
                query=query,
                found=found,
                chat=self.chat,
                timeout_s=self.config.expansion_timeout_s,
                max_tokens=self.config.bridge_max_tokens,
            )
            trace.settings[f"{kind}:made_by"] = how
            texts = [text]
        lists = []
        for i, text in enumerate(texts):
            name = kind if i == 0 else f"{kind}.{i + 1}"
            trace.variants.append(QueryVariant(name, text))
            lists.append(await self._variant(text, request, trace, name))
        return lists, bridges

    async def _finish(
        self, query: str, candidates: list[Candidate], trace: RetrievalTrace
    ) -> list[RetrievedChunk]:
        head = candidates[: max(self.config.final_k, self.config.rerank_depth)]
        chunks = await self._hydrated(head)
        with _timed(trace, "rerank"):
            scores = await self.reranker.rerank(query=query, passages=[c.text for c in chunks])
        if scores:
            chunks = [
                replace(
                    chunks[s.index],
                    score=s.score,
                    candidate=replace(
                        chunks[s.index].candidate, rerank_rank=i, rerank_score=s.score
                    ),
                )
                for i, s in enumerate(scores, start=1)
            ]
        elif not isinstance(self.reranker, NoReranker):
            trace.settings["rerank_fallback"] = "none"
        final = chunks[: self.config.final_k]
        trace.candidates = [c.candidate for c in chunks] + list(candidates[len(head) :][:70])
        return final

    async def _hydrated(self, candidates: Sequence[Candidate]) -> list[RetrievedChunk]:
        rows = await db_call(chunks_hydrate, lane="search")([c.chunk_id for c in candidates])
        return [
            RetrievedChunk(**vars(rows[c.chunk_id]), score=c.fused_score, candidate=c)
            for c in candidates
            if c.chunk_id in rows  # a chunk swapped out by a concurrent re-ingestion is skipped
        ]


@contextmanager
def _timed(trace: RetrievalTrace, stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed = (time.perf_counter() - start) * 1000
        trace.timings_ms[stage] = round(trace.timings_ms.get(stage, 0.0) + elapsed, 3)
