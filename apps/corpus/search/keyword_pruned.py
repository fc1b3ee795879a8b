"""BM25 that reads the postings of a question's most common words only for its best candidates.

Exact BM25 reads every posting of every query term. Under the `simple` configuration a common
Persian word ("و", "در", "است") has postings in most chunks, so on a large collection a
question with such a word reads most of the postings table and costs seconds, while its
rare words, which decide the ranking, have a few hundred postings.

Here the query's terms are taken in order of document frequency, rarest first, and read in
full while their postings add up to at most `postings_budget`; these find the candidates and
score them. The `rescore_depth` best candidates then get the rest of their score: the other
terms' postings are looked up for those chunks only (the (chunk, lexeme) unique index). Every
returned score is the exact BM25 score; what may differ from exact BM25 is which chunks are
candidates: one that holds none of the terms read in full is not found. Document frequencies
are counted in the scope like exact BM25's; a term in CACHED_FROM chunks or more keeps its
count for STATS_TTL_S (one new document moves it by a few in thousands), so the common words
every question holds are not counted again for each one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from apps.corpus.search.scope import (
    STATS_TTL_S,
    ScoredChunk,
    SearchFilters,
    postings_scope,
    scope_stats,
)

Term = tuple[str, str]  # (text-search config, lexeme)


@dataclass(frozen=True)
class KeywordPruning:
    """How much of the postings table one keyword search reads (RAG_KEYWORD_POSTINGS_BUDGET,
    RAG_KEYWORD_RESCORE_DEPTH)."""

    postings_budget: int = 50_000
    rescore_depth: int = 500

    def __post_init__(self) -> None:
        if self.postings_budget < 1 or self.rescore_depth < 1:
            raise ValueError("postings_budget and rescore_depth must be positive")


@dataclass(frozen=True)
class TermPlan:
    """The query's terms with their BM25 weights (idf), split into those read in full and
    those looked up for the best candidates only."""

    read: tuple[tuple[Term, float], ...]
    later: tuple[tuple[Term, float], ...]


def bm25_pruned(
    *,
    terms: str,
    filters: SearchFilters,
    limit: int,
    k1: float,
    b: float,
    pruning: KeywordPruning,
) -> list[ScoredChunk]:
    total, avg_length = scope_stats(filters)
    if not total:
        return []
    frequencies = terms_frequency(terms=terms, filters=filters, cap=pruning.postings_budget)
    plan = terms_plan(frequencies, total=total, budget=pruning.postings_budget)
    if not plan.read:
        return []
    shape = {"k1": float(k1), "b": float(b), "avg": float(avg_length)}
    depth = max(pruning.rescore_depth, limit)
    found = _scored(
        plan, filters, limit=limit, depth=depth, budget=pruning.postings_budget, shape=shape
    )
    if len(found) < limit and plan.later:
        # Fewer chunks hold a term read in full than were asked for: exact BM25 would go on
        # with chunks holding only common words, and so does this (from a bounded sample of
        # their postings), so the fused list keeps its length and its tail.
        found += _filled(plan, filters, found, need=limit - len(found), depth=depth, shape=shape)
    return found


def terms_plan(frequencies: dict[Term, int], *, total: int, budget: int) -> TermPlan:
    """Rarest first, terms are read in full while their postings fit the budget (the rarest
    always is, cut at the budget if it alone is over); the rest count for candidates only."""
    ranked = sorted(((df, term) for term, df in frequencies.items() if df > 0))
    read: list[tuple[Term, float]] = []
    later: list[tuple[Term, float]] = []
    spent = 0
    for df, term in ranked:
        weight = math.log(1 + (total - df + 0.5) / (df + 0.5))
        if not read or spent + df <= budget:
            read.append((term, weight))
            spent += df
        else:
            later.append((term, weight))
    return TermPlan(tuple(read), tuple(later))


CACHED_FROM = 1000
_counted: dict[tuple[SearchFilters, str, str], tuple[float, int]] = {}


def terms_frequency(*, terms: str, filters: SearchFilters, cap: int) -> dict[Term, int]:
    """In-scope document frequency of each lexeme of `terms` (both configurations). Counting
    stops past `cap`; a term that reaches it is counted in full. Counts from CACHED_FROM up
    are kept for STATS_TTL_S."""
    found: dict[Term, int] = {}
    now = time.monotonic()
    where, params = postings_scope(filters)
    with connection.cursor() as cursor:
        lexemes = _lexemes(cursor, terms)
        unknown = []
        for term in lexemes:
            cached = _counted.get((filters, *term))
            if cached and now - cached[0] < STATS_TTL_S:
                found[term] = cached[1]
            else:
                unknown.append(term)
        counted = _counts(cursor, unknown, where, params, cap=cap + 1)
        for term, df in counted.items():
            if df > cap:
                df = _counts(cursor, [term], where, params, cap=None)[term]
            if df >= CACHED_FROM:
                _counted[(filters, *term)] = (now, df)
            found[term] = df
    return found


def _lexemes(cursor: Any, terms: str) -> list[Term]:
    cursor.execute(
        """
        SELECT DISTINCT v.cfg, lexeme
        FROM (VALUES ('english'), ('simple')) AS v(cfg),
             unnest(tsvector_to_array(to_tsvector(v.cfg::regconfig, %s))) AS lexeme
        """,
        [terms],
    )
    return [(r[0], r[1]) for r in cursor.fetchall()]


def _counts(
    cursor: Any, terms: Sequence[Term], where: str, params: dict[str, Any], *, cap: int | None
) -> dict[Term, int]:
    """Postings of each term in scope (an index-only scan), at most `cap` of them counted."""
    if not terms:
        return {}
    limit = "LIMIT %(cap)s" if cap is not None else ""
    cursor.execute(
        f"""
        SELECT q.cfg, q.lexeme, (
            SELECT count(*) FROM (
                SELECT 1 FROM corpus_chunkterm t
                WHERE t.lexeme = q.lexeme AND t.config = q.cfg AND {where} {limit}
            ) s)
        FROM unnest(%(cfgs)s::text[], %(lexemes)s::text[]) AS q(cfg, lexeme)
        """,  # noqa: S608 - the fragments are built from constants; values are parameters
        {
            "cfgs": [t[0] for t in terms],
            "lexemes": [t[1] for t in terms],
            "cap": cap,
            **params,
        },
    )
    return {(r[0], r[1]): int(r[2]) for r in cursor.fetchall()}


# One term's BM25 share in chunk `t`, for the weight (idf) column named in the format.
_SATURATED = (
    "{w} * t.tf * (%(k1)s + 1) / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * t.length / %(avg)s))"
)
_READ_SHARE, _LATER_SHARE = _SATURATED.format(w="q.w"), _SATURATED.format(w="p.w")
# The common terms' share of the score of each chunk in `pool`: looked up chunk by chunk in the
# (chunk, lexeme) index (LATERAL keeps the planner from reading the terms' postings instead).
_LATER_SCORE = f"""
    SELECT c.chunk_id, sum({_LATER_SHARE}) AS score
    FROM pool c CROSS JOIN LATERAL (
        SELECT t.lexeme, t.config, t.tf::float8 AS tf, t.length::float8 AS length
        FROM corpus_chunkterm t
        WHERE t.chunk_id = c.chunk_id AND t.lexeme = ANY(%(l_lex)s)
    ) t
    JOIN later p ON p.lexeme = t.lexeme AND p.cfg = t.config
    GROUP BY c.chunk_id
"""  # noqa: S608 - constant


def _scored(
    plan: TermPlan,
    filters: SearchFilters,
    *,
    limit: int,
    depth: int,
    budget: int,
    shape: dict[str, float],
) -> list[ScoredChunk]:
    """Candidates from the terms read in full, their `depth` best completed with the others."""
    where, params = postings_scope(filters)
    sql = f"""
        WITH read AS (
            SELECT * FROM unnest(%(r_cfg)s::text[], %(r_lex)s::text[], %(r_w)s::float8[])
                AS q(cfg, lexeme, w)
        ),
        candidates AS MATERIALIZED (
            SELECT t.chunk_id, sum({_READ_SHARE}) AS score
            FROM read q CROSS JOIN LATERAL (
                SELECT t.chunk_id, t.tf::float8 AS tf, t.length::float8 AS length
                FROM corpus_chunkterm t
                WHERE t.lexeme = q.lexeme AND t.config = q.cfg AND {where}
                LIMIT %(budget)s
            ) t
            GROUP BY t.chunk_id
            ORDER BY score DESC, t.chunk_id
            LIMIT %(depth)s
        ),
        later AS (
            SELECT * FROM unnest(%(l_cfg)s::text[], %(l_lex)s::text[], %(l_w)s::float8[])
                AS p(cfg, lexeme, w)
        ),
        pool AS (SELECT chunk_id FROM candidates),
        rest AS ({_LATER_SCORE})
        SELECT c.chunk_id, c.score + coalesce(r.score, 0) AS score
        FROM candidates c LEFT JOIN rest r ON r.chunk_id = c.chunk_id
        ORDER BY score DESC, c.chunk_id
        LIMIT %(limit)s
    """  # noqa: S608 - the fragments are built from constants; values are parameters
    values: dict[str, Any] = {
        **_arrays(plan),
        "budget": budget,
        "depth": depth,
        "limit": limit,
        **shape,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, {**values, **params})
        return [ScoredChunk(r[0], float(r[1])) for r in cursor.fetchall()]


def _arrays(plan: TermPlan) -> dict[str, list[Any]]:
    return {
        "r_cfg": [term[0] for term, _ in plan.read],
        "r_lex": [term[1] for term, _ in plan.read],
        "r_w": [w for _, w in plan.read],
        "l_cfg": [term[0] for term, _ in plan.later],
        "l_lex": [term[1] for term, _ in plan.later],
        "l_w": [w for _, w in plan.later],
    }


def _filled(
    plan: TermPlan,
    filters: SearchFilters,
    found: Sequence[ScoredChunk],
    *,
    need: int,
    depth: int,
    shape: dict[str, float],
) -> list[ScoredChunk]:
    """Up to `need` chunks holding only the common terms, each exactly scored, the best of
    the first `depth` postings of each such term (exact BM25 would search all of them)."""
    where, params = postings_scope(filters)
    sql = f"""
        WITH later AS (
            SELECT * FROM unnest(%(l_cfg)s::text[], %(l_lex)s::text[], %(l_w)s::float8[])
                AS p(cfg, lexeme, w)
        ),
        pool AS (
            SELECT DISTINCT t.chunk_id
            FROM later p CROSS JOIN LATERAL (
                SELECT t.chunk_id FROM corpus_chunkterm t
                WHERE t.lexeme = p.lexeme AND t.config = p.cfg AND {where}
                LIMIT %(depth)s
            ) t
            WHERE t.chunk_id <> ALL(%(seen)s)
        )
        {_LATER_SCORE}
        ORDER BY score DESC, c.chunk_id
        LIMIT %(need)s
    """  # noqa: S608 - the fragments are built from constants; values are parameters
    values: dict[str, Any] = {
        **_arrays(plan),
        "seen": [c.chunk_id for c in found],
        "depth": depth,
        "need": need,
        **shape,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, {**values, **params})
        return [ScoredChunk(r[0], float(r[1])) for r in cursor.fetchall()]
