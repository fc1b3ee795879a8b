"""Search selectors: the dense (pgvector HNSW) and keyword (PostgreSQL full-text) legs.

Reads only. Both legs take the same filters and return chunk ids with a score, best first;
fusion, reranking and context building live in apps/answers/retrieval/.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import connection, transaction

from apps.corpus.parsing.detect import filename_stem
from apps.corpus.text import normalise_text, words
from apps.corpus.text.search_form import search_form

KeywordScoring = Literal["bm25", "ts_rank_cd"]
MAX_QUERY_TERMS = 64
DISPLAY_TITLE_WORDS = 8  # a source without a title is shown by its first words
_TERM = re.compile(r"\w+(?:[\u200c'’]\w+)*", re.UNICODE)


@dataclass(frozen=True)
class SearchFilters:
    """What a search may return. `collection_ids` None searches every collection; a tuple
    searches exactly those, and an empty one nothing (a user who may read no collection).
    The other fields, when empty, do not restrict."""

    collection_ids: tuple[int, ...] | None = None
    domains: tuple[str, ...] = ()
    document_types: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing can match: skip the query (an HNSW scan would walk the whole index)."""
        return self.collection_ids == ()

    def sql(self) -> tuple[str, list[Any]]:
        """A WHERE fragment over chunk `c` and document `d`, with its parameters."""
        clauses: list[str] = ["TRUE"]
        params: list[Any] = []
        if self.collection_ids is not None:
            clauses.append("d.collection_id = ANY(%s)")
            params.append(list(self.collection_ids))
        for column, values in (
            ("d.domain", self.domains),
            ("d.document_type", self.document_types),
            ("c.language", self.languages),
        ):
            if values:
                clauses.append(f"{column} = ANY(%s)")
                params.append(list(values))
        return " AND ".join(f"({c})" for c in clauses), params


@dataclass(frozen=True)
class ScoredChunk:
    chunk_id: int
    score: float


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


def dense_search_sql(
    *, embedding: Sequence[float], filters: SearchFilters, limit: int, model_id: str | None = None
) -> tuple[str, list[Any]]:
    """The nearest-neighbour query (cosine distance, so the vector_cosine_ops HNSW index serves it).

    With `model_id`, only vectors of that model are compared: another model's cosine is noise.
    """
    where, params = filters.sql()
    if model_id is not None:
        where, params = f"{where} AND c.embedding_model = %s", [*params, model_id]
    vector = "[" + ",".join(f"{x:.7f}" for x in embedding) + "]"
    sql = f"""
        SELECT c.id, 1 - (c.embedding <=> %s::vector) AS similarity
        FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
        WHERE {where}
        ORDER BY c.embedding <=> %s::vector
        LIMIT %s
    """  # noqa: S608 - the WHERE fragment is built from constants; values are parameters
    return sql, [vector, *params, vector, limit]


def dense_search_settings(cursor: Any, *, ef_search: int, limit: int) -> None:
    """Per-transaction HNSW settings. Iterative scans keep going past entries that filters,
    or dead rows left by re-ingestion, remove, so a scan still returns `limit` rows."""
    cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(max(ef_search, limit))])
    cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")


def chunks_dense_search(
    *,
    embedding: Sequence[float],
    filters: SearchFilters,
    limit: int,
    ef_search: int = 100,
    model_id: str | None = None,
) -> list[ScoredChunk]:
    """Cosine similarity via the HNSW index, best first (among `model_id`'s vectors, if given)."""
    if filters.empty:
        return []
    sql, params = dense_search_sql(
        embedding=embedding, filters=filters, limit=limit, model_id=model_id
    )
    with transaction.atomic(), connection.cursor() as cursor:
        dense_search_settings(cursor, ef_search=ef_search, limit=limit)
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    # relaxed_order may return neighbours slightly out of order.
    return sorted((ScoredChunk(r[0], float(r[1])) for r in rows), key=lambda s: -s.score)


def chunks_keyword_search(
    *,
    query: KeywordQuery,
    filters: SearchFilters,
    limit: int,
    scoring: KeywordScoring = "bm25",
    k1: float = 1.2,
    b: float = 0.75,
) -> list[ScoredChunk]:
    if not query.terms or filters.empty:
        return []
    if scoring == "ts_rank_cd":
        return _ts_rank_cd(query, filters, limit)
    return _bm25(query, filters, limit, k1=k1, b=b)


_MATCH = """
    ((c.search_config = 'english' AND c.search_vector @@ websearch_to_tsquery('english', %(q)s))
     OR (c.search_config = 'simple' AND c.search_vector @@ websearch_to_tsquery('simple', %(q)s)))
"""


def _ts_rank_cd(query: KeywordQuery, filters: SearchFilters, limit: int) -> list[ScoredChunk]:
    where, params = _named(filters)
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
    where, params = _postings_scope(filters)
    total, avg_length = _scope_stats(filters)
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


_CONFIG_FOR_LANGUAGE = {"en": "english", "fa": "simple"}


def _postings_scope(filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """The filters over postings `t`: documents through one hashed sub-select, languages
    through the text-search config they imply (a chunk's config follows its language)."""
    clauses: list[str] = ["TRUE"]
    params: dict[str, Any] = {}
    document_filters = SearchFilters(
        collection_ids=filters.collection_ids,
        domains=filters.domains,
        document_types=filters.document_types,
    )
    if document_filters != SearchFilters():
        where, values = _named(document_filters)
        subquery = f"SELECT d.id FROM corpus_document d WHERE {where}"  # noqa: S608 - constant columns
        clauses.append(f"t.document_id IN ({subquery})")
        params.update(values)
    if filters.languages:
        configs = sorted({_CONFIG_FOR_LANGUAGE.get(lang, "simple") for lang in filters.languages})
        clauses.append("t.config = ANY(%(configs)s)")
        params["configs"] = configs
    return " AND ".join(f"({c})" for c in clauses), params


_STATS_TTL_S = 60.0
_stats_cache: dict[SearchFilters, tuple[float, int, float]] = {}


def _scope_stats(filters: SearchFilters) -> tuple[int, float]:
    """Chunk count and mean length of the scope; cached briefly (they move slowly)."""
    cached = _stats_cache.get(filters)
    if cached and time.monotonic() - cached[0] < _STATS_TTL_S:
        return cached[1], cached[2]
    where, params = filters.sql()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(avg(c.search_length), 0) FROM corpus_chunk c "  # noqa: S608
            f"JOIN corpus_document d ON d.id = c.document_id WHERE {where}",
            params,
        )
        total, avg_length = cursor.fetchone() or (0, 0)
    _stats_cache[filters] = (time.monotonic(), int(total), float(avg_length) or 1.0)
    return int(total), float(avg_length) or 1.0


def _named(filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """The filter fragment with named placeholders (the keyword SQL repeats it)."""
    where, values = filters.sql()
    named: dict[str, Any] = {}
    for i, value in enumerate(values):
        where = where.replace("%s", f"%(f{i})s", 1)
        named[f"f{i}"] = value
    return where, named


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: int
    document_id: int
    title: str
    filename: str
    heading: str
    page: int | None
    text: str
    token_count: int
    language: str

    @property
    def display_title(self) -> str:
        """What a person sees as the source's name: the document's own title or, when ingestion
        fell back to the file's name for want of one, the chunk's heading or its first words."""
        if self.title and self.title != filename_stem(self.filename):
            return self.title
        return self.heading or _first_words(self.text) or self.title or self.filename


def _first_words(text: str, count: int = DISPLAY_TITLE_WORDS) -> str:
    found = words(text)
    return " ".join(found[:count]) + ("…" if len(found) > count else "")


def chunks_hydrate(chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
    """Text and source of the given chunks, in one query (no vectors)."""
    if not chunk_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.id, c.document_id, d.title, d.filename, c.heading, c.page, c.text,
                   c.token_count, c.language
            FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
            WHERE c.id = ANY(%s)
            """,
            [list(chunk_ids)],
        )
        return {row[0]: ChunkRow(*row) for row in cursor.fetchall()}


_MARK_START, _MARK_END = "\x02", "\x03"


def chunk_headlines(*, chunk_ids: Sequence[int], query: KeywordQuery) -> dict[int, str]:
    """Short excerpts with the query terms wrapped in control characters (callers escape the
    text, then turn them into <mark>: ts_headline itself does not escape HTML)."""
    if not chunk_ids:
        return {}
    options = (
        f"StartSel={_MARK_START}, StopSel={_MARK_END}, MaxWords=40, MinWords=15, "
        'MaxFragments=2, FragmentDelimiter=" … "'
    )
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.id, ts_headline(c.search_config::regconfig, c.text,
                                     websearch_to_tsquery(c.search_config::regconfig, %s), %s)
            FROM corpus_chunk c WHERE c.id = ANY(%s)
            """,
            [query.text, options, list(chunk_ids)],
        )
        return {row[0]: row[1] for row in cursor.fetchall()}


def headline_html(headline: str) -> str:
    import html

    return html.escape(headline).replace(_MARK_START, "<mark>").replace(_MARK_END, "</mark>")
