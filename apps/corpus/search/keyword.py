"""The keyword leg: a question's words OR-ed together, ranked by Okapi BM25 from the postings
table (corpus_chunkterm, filled at ingestion) or by PostgreSQL's `ts_rank_cd`.

Reads only. Exact BM25 reads every posting of every query term; with `KeywordPruning` the
postings of a question's most common words are read only for its best candidates
(keyword_pruned.py), which keeps a large collection's keyword search within its budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import connection

from apps.corpus.search.keyword_pruned import KeywordPruning, bm25_pruned
from apps.corpus.search.scope import (
    ScoredChunk,
    SearchFilters,
    filters_named,
    postings_scope,
    scope_stats,
)
from apps.corpus.text import normalise_text
from apps.corpus.text.search_form import search_form

KeywordScoring = Literal["bm25", "ts_rank_cd"]
MAX_QUERY_TERMS = 64
_TERM = re.compile(r"\w+(?:[\u200c'’]\w+)*", re.UNICODE)


@dataclass(frozen=True)
class KeywordQuery:
    """Query terms OR-ed together: a question's words rarely all appear in one passage."""

    text: str
    terms: tuple[str, ...] = field(default=())

    @classmethod
    def from_text(cls, text: str) -> KeywordQuery:
        found = _TERM.findall(search_form(normalise_text(text)))
        terms = tuple(dict.fromkeys(t.lower() for t in found))[:MAX_QUERY_TERMS]
        # websearch_to_tsquery never raises on user input; "or" is its OR operator.
        return cls(text=" or ".join(terms), terms=terms)


def chunks_keyword_search(
    *,
    query: KeywordQuery,
    filters: SearchFilters,
    limit: int,
    scoring: KeywordScoring = "bm25",
    k1: float = 1.2,
    b: float = 0.75,
    pruning: KeywordPruning | None = None,
) -> list[ScoredChunk]:
    """The best `limit` chunks for the query's words, best first. BM25 is exact without
    `pruning`; with it, the most common words count only for the best candidates."""
    if not query.terms or filters.empty:
        return []
    if scoring == "ts_rank_cd":
        return _ts_rank_cd(query, filters, limit)
    if pruning is not None:
        return bm25_pruned(
            terms=" ".join(query.terms),
            filters=filters,
            limit=limit,
            k1=k1,
            b=b,
            pruning=pruning,
        )
    return _bm25(query, filters, limit, k1=k1, b=b)


_MATCH = """
    ((c.search_config = 'english' AND c.search_vector @@ websearch_to_tsquery('english', %(q)s))
     OR (c.search_config = 'simple' AND c.search_vector @@ websearch_to_tsquery('simple', %(q)s)))
"""


def _ts_rank_cd(query: KeywordQuery, filters: SearchFilters, limit: int) -> list[ScoredChunk]:
    where, params = filters_named(filters)
    sql = f"""
        SELECT c.id, ts_rank_cd(c.search_vector, websearch_to_tsquery(
            c.search_config::regconfig, %(q)s)) AS score
        FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
        WHERE {_MATCH} AND {where}
        ORDER BY score DESC, c.id
        LIMIT %(limit)s
    """  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, {"q": query.text, "limit": limit, **params})
        return [ScoredChunk(r[0], float(r[1])) for r in cursor.fetchall()]


def _bm25(
    query: KeywordQuery, filters: SearchFilters, limit: int, *, k1: float, b: float
) -> list[ScoredChunk]:
    """Okapi BM25 from the postings table (corpus_chunkterm), filled at ingestion.

    Only the postings of the query's own lexemes are read (an index-only scan of the covering
    index); document frequencies are counted within the filtered scope from those same rows.
    """
    where, params = postings_scope(filters)
    total, avg_length = scope_stats(filters)
    if not total:
        return []
    sql = f"""
        WITH terms AS (
            SELECT DISTINCT v.cfg, lexeme
            FROM (VALUES ('english'), ('simple')) AS v(cfg),
                 unnest(tsvector_to_array(to_tsvector(v.cfg::regconfig, %(terms)s))) AS lexeme
        ),
        hits AS MATERIALIZED (
            SELECT t.chunk_id, t.tf::float8 AS tf, t.length::float8 AS length, t.config, t.lexeme
            FROM terms q
            JOIN corpus_chunkterm t ON t.lexeme = q.lexeme AND t.config = q.cfg
            WHERE {where}
        ),
        idf AS (
            SELECT config, lexeme,
                   ln(1 + (%(total)s - count(*) + 0.5) / (count(*) + 0.5)) AS w
            FROM hits GROUP BY config, lexeme
        )
        SELECT h.chunk_id, sum(
            idf.w * h.tf * (%(k1)s + 1)
            / (h.tf + %(k1)s * (1 - %(b)s + %(b)s * h.length / %(avg)s))
        ) AS score
        FROM hits h JOIN idf ON idf.config = h.config AND idf.lexeme = h.lexeme
        GROUP BY h.chunk_id
        ORDER BY score DESC, h.chunk_id
        LIMIT %(limit)s
    """  # noqa: S608
    values: dict[str, Any] = {
        "terms": " ".join(query.terms),
        "limit": limit,
        "total": float(total),
        "avg": float(avg_length),
        "k1": float(k1),
        "b": float(b),
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, {**values, **params})
        return [ScoredChunk(r[0], float(r[1])) for r in cursor.fetchall()]
