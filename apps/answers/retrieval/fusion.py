"""Fusion of the dense and keyword legs, and merging of fused lists.

The default fuses scores, not ranks: each leg's scores are standardised over its own list for
this query (z-scores), and a chunk's fused score is a weighted sum of its two standardised
scores. A hit counts by how far it stands above the rest of its own leg's list, in that list's
standard deviations: a keyword hit far ahead of the others outweighs a dense hit barely ahead
of its neighbours. Rank fusion cannot see that: with reciprocal ranks every leg's first hit
counts the same, however narrow its lead.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal, get_args

from apps.answers.retrieval.types import Candidate
from apps.corpus.search.legs import ScoredChunk

FusionMethod = Literal["zscore", "rrf"]
FUSION_METHODS: tuple[FusionMethod, ...] = get_args(FusionMethod)
# Scores are standardised over a leg's first NORM_DEPTH hits, so a search that fetches more
# candidates (evaluation fetches 200 per leg) fuses the same way as the product (100).
NORM_DEPTH = 100


def zscore_fuse(
    *,
    dense: Sequence[ScoredChunk],
    keyword: Sequence[ScoredChunk],
    dense_share: float = 0.5,
    variant: str = "original",
) -> list[Candidate]:
    """score = share * z_dense + (1 - share) * z_keyword, each z over its leg's own list
    (squashed into (0, 1) by a logistic, which keeps the order).

    A chunk one leg did not return gets that leg's lowest standardised score: it ranked below
    everything the leg returned. With one leg empty the order is the other leg's.
    """
    found = _legs_joined(dense=dense, keyword=keyword, variant=variant)
    dense_z, keyword_z = _standardised(dense), _standardised(keyword)
    dense_floor = min(dense_z.values(), default=0.0)
    keyword_floor = min(keyword_z.values(), default=0.0)
    scored = [
        replace(
            c,
            fused_score=_squashed(
                dense_share * dense_z.get(c.chunk_id, dense_floor)
                + (1.0 - dense_share) * keyword_z.get(c.chunk_id, keyword_floor)
            ),
        )
        for c in found.values()
    ]
    return _ranked(scored)


def _squashed(value: float) -> float:
    """Into (0, 1), order kept: a negative or zero score would read upside down. It orders
    one query's results only; what search shows is retrieval/relevance.py's."""
    return 1.0 / (1.0 + math.exp(-value))


def _standardised(hits: Sequence[ScoredChunk]) -> dict[int, float]:
    head = [h.score for h in hits[:NORM_DEPTH]]
    if len(head) < 2:
        return {h.chunk_id: 0.0 for h in hits}
    mean, spread = statistics.fmean(head), statistics.pstdev(head)
    if spread <= 0.0:
        return {h.chunk_id: 0.0 for h in hits}
    return {h.chunk_id: (h.score - mean) / spread for h in hits}


def _legs_joined(
    *, dense: Sequence[ScoredChunk], keyword: Sequence[ScoredChunk], variant: str
) -> dict[int, Candidate]:
    """One candidate per chunk, with its rank and raw score in each leg that returned it."""
    found: dict[int, Candidate] = {}
    for rank, hit in enumerate(dense, start=1):
        found[hit.chunk_id] = Candidate(
            hit.chunk_id, dense_rank=rank, dense_score=hit.score, variant=variant
        )
    for rank, hit in enumerate(keyword, start=1):
        previous = found.get(hit.chunk_id, Candidate(hit.chunk_id, variant=variant))
        found[hit.chunk_id] = replace(previous, keyword_rank=rank, keyword_score=hit.score)
    return found


def _ranked(scored: list[Candidate]) -> list[Candidate]:
    """Best fused score first; ties broken by the dense rank, then chunk id."""
    scored.sort(key=lambda c: (-c.fused_score, c.dense_rank or 10**9, c.chunk_id))
    return [replace(c, fused_rank=i) for i, c in enumerate(scored, start=1)]


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
    found = _legs_joined(dense=dense, keyword=keyword, variant=variant)
    scored = [
        replace(
            c, fused_score=_rrf(c, k=k, dense_weight=dense_weight, keyword_weight=keyword_weight)
        )
        for c in found.values()
    ]
    return _ranked(scored)


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


def candidates_interleave(lists: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """Merge the lists of successive hops by taking each list's next unseen chunk in turn.

    The hops find different passages, each at the top of its own list: summing reciprocal
    ranks would let a chunk that two weak lists both hold outrank the one passage only the
    bridge's search found, which the answer needs as much as the first hop's.
    """
    seen: dict[int, Candidate] = {}
    for depth in range(max((len(c) for c in lists), default=0)):
        for candidates in lists:
            if depth < len(candidates) and candidates[depth].chunk_id not in seen:
                seen[candidates[depth].chunk_id] = candidates[depth]
    return [
        replace(c, fused_rank=i, fused_score=1.0 / i) for i, c in enumerate(seen.values(), start=1)
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
