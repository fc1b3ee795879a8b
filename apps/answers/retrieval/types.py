"""Values passed between retrieval stages (frozen: a stage never edits another's output)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from apps.answers.routing.types import Strategy
from apps.corpus.search.legs import ChunkRow, SearchFilters


@dataclass(frozen=True)
class Candidate:
    chunk_id: int
    dense_rank: int | None = None
    dense_score: float | None = None
    keyword_rank: int | None = None
    keyword_score: float | None = None
    fused_rank: int = 0
    fused_score: float = 0.0
    rerank_rank: int | None = None
    rerank_score: float | None = None
    variant: str = "original"  # which query variant found it first (original, hyde, hop-1, ...)


@dataclass(frozen=True)
class RetrievedChunk(ChunkRow):
    """A chunk's text and source, with how retrieval ranked it."""

    score: float  # the final ordering score (rerank if any, else fused)
    candidate: Candidate


@dataclass(frozen=True)
class ContextChunk:
    alias: str  # c1..cN, stable for the turn
    chunk: RetrievedChunk
    text: str  # whole sentences only


@dataclass(frozen=True)
class ContextWindow:
    chunks: tuple[ContextChunk, ...]
    budget_tokens: int
    used_tokens: int
    dropped_chunk_ids: tuple[int, ...]

    @property
    def utilisation(self) -> float:
        return self.used_tokens / self.budget_tokens if self.budget_tokens else 0.0

    def by_alias(self) -> dict[str, ContextChunk]:
        return {c.alias: c for c in self.chunks}


@dataclass(frozen=True)
class QueryVariant:
    kind: str  # original | rewrite | hyde | hop-N
    text: str
    skipped_reason: str = ""


@dataclass(frozen=True)
class QueryRewrite:
    """A follow-up made standalone ("who stars in it?" + the earlier topic's terms)."""

    query: str
    method: str  # rules | chat
    carried: tuple[str, ...] = ()  # the earlier turns' terms the rules added


@dataclass
class RetrievalTrace:
    """What retrieval did for one turn; stored with the turn and read by the admin audit."""

    variants: list[QueryVariant] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RetrievalRequest:
    query: str
    filters: SearchFilters = field(default_factory=SearchFilters)
    strategy: Strategy = Strategy.SIMPLE  # from the router
    query_embedding: tuple[float, ...] | None = None  # an embedding of `query` made earlier
    # The fused candidates of `query` itself from a pass already run (the turn's speculative
    # first pass): the original variant is then not searched again.
    original_candidates: tuple[Candidate, ...] | None = None
    # A follow-up's standalone query: searched beside `query` and fused with it, and the
    # query that expansion and reranking read.
    rewrite: QueryRewrite | None = None


@dataclass(frozen=True)
class Bridge:
    """Multi-hop: what the first hop found that the question did not name, and how the next
    hop searched it."""

    entity: str
    query: str  # the entity with the question's terms its source passage did not hold
    chunk_id: int  # the first-hop chunk that names it


@dataclass(frozen=True)
class RetrievalResult:
    chunks: tuple[RetrievedChunk, ...]
    trace: RetrievalTrace
    # The query's own fused list (with its rewrite's, for a follow-up), for reuse.
    original_candidates: tuple[Candidate, ...] = ()
    rewrite: QueryRewrite | None = None  # the request's, so a second pass can reuse it
    # Multi-hop (complex strategy): what the first hop found and the next hop searched.
    bridges: tuple[Bridge, ...] = ()
    # The embeddings of the query (and of its rewrite) the dense leg searched with, by text:
    # the composer scores sentences against the same vector instead of making it again.
    query_vectors: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def query_vector(self, text: str) -> tuple[float, ...] | None:
        return next((vector for made, vector in self.query_vectors if made == text), None)
