"""Reciprocal rank fusion of the dense and keyword legs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from apps.answers.retrieval.types import Candidate
from apps.corpus.search import ScoredChunk


def rrf_fuse(
    *,
    dense: Sequence[ScoredChunk],
    keyword: Sequence[ScoredChunk],
    k: int = 60,
    dense_weight: float = 1.0,
    keyword_weight: float = 1.0,
    variant: str = "original",
) -> list[Candidate]:
    """score = sum(weight / (k + rank)); ties broken by the dense rank, then chunk id."""
    found: dict[int, Candidate] = {}
    for rank, hit in enumerate(dense, start=1):
        found[hit.chunk_id] = Candidate(
            hit.chunk_id, dense_rank=rank, dense_score=hit.score, variant=variant
        )
    for rank, hit in enumerate(keyword, start=1):
        previous = found.get(hit.chunk_id, Candidate(hit.chunk_id, variant=variant))
        found[hit.chunk_id] = replace(previous, keyword_rank=rank, keyword_score=hit.score)
    scored = [
        replace(
            c, fused_score=_rrf(c, k=k, dense_weight=dense_weight, keyword_weight=keyword_weight)
        )
        for c in found.values()
    ]
    scored.sort(key=lambda c: (-c.fused_score, c.dense_rank or 10**9, c.chunk_id))
    return [replace(c, fused_rank=i) for i, c in enumerate(scored, start=1)]


def _rrf(candidate: Candidate, *, k: int, dense_weight: float, keyword_weight: float) -> float:
    score = 0.0
    if candidate.dense_rank is not None:
        score += dense_weight / (k + candidate.dense_rank)
    if candidate.keyword_rank is not None:
        score += keyword_weight / (k + candidate.keyword_rank)
    return score


def candidates_merge(lists: Sequence[Sequence[Candidate]], *, k: int = 60) -> list[Candidate]:
    """Merge the fused lists of several query variants (HyDE, hops) by RRF over their ranks."""
    if len(lists) == 1:
        return list(lists[0])
    best: dict[int, Candidate] = {}
    score: dict[int, float] = {}
    for candidates in lists:
        for c in candidates:
            score[c.chunk_id] = score.get(c.chunk_id, 0.0) + 1.0 / (k + c.fused_rank)
            best.setdefault(c.chunk_id, c)
    ordered = sorted(best.values(), key=lambda c: (-score[c.chunk_id], c.chunk_id))
    return [
        replace(c, fused_rank=i, fused_score=score[c.chunk_id])
        for i, c in enumerate(ordered, start=1)
    ]


def candidates_prefer(
    primary: Sequence[Candidate], secondary: Sequence[Candidate], *, weight: float, k: int = 60
) -> list[Candidate]:
    """Merge two fused lists by the better of their weighted reciprocal ranks (not the sum).

    For a follow-up's rewrite (primary) and its own words (secondary): the rewrite already holds
    those words, so summing would reward every passage that matches the fragment alone ("when
    was he born?" finds every biography) over the one the conversation is about. The
    secondary list still places its best passages, behind the rewrite's first few.
    """
    score: dict[int, float] = {}
    best: dict[int, Candidate] = {}
    for candidates, w in ((primary, 1.0), (secondary, weight)):
        for c in candidates:
            value = w / (k + c.fused_rank)
            if value > score.get(c.chunk_id, 0.0):
                score[c.chunk_id] = value
            best.setdefault(c.chunk_id, c)
    ordered = sorted(best.values(), key=lambda c: (-score[c.chunk_id], c.chunk_id))
    return [
        replace(c, fused_rank=i, fused_score=score[c.chunk_id])
        for i, c in enumerate(ordered, start=1)
    ]
