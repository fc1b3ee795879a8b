"""Search selectors: the dense leg (pgvector HNSW), and reading found chunks back.

Reads only. Both legs take the same filters and return chunk ids with a score, best first;
the keyword leg (BM25 postings) lives in keyword.py and the filters in scope.py, both
importable from here too. Fusion, reranking and context building live in apps/answers/retrieval/.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from apps.corpus.parsing.detect import filename_stem
from apps.corpus.search.keyword import KeywordQuery, KeywordScoring, chunks_keyword_search
from apps.corpus.search.keyword_pruned import KeywordPruning
from apps.corpus.search.scope import ScoredChunk, SearchFilters
from apps.corpus.text import words

__all__ = [
    "ChunkRow",
    "KeywordPruning",
    "KeywordQuery",
    "KeywordScoring",
    "ScoredChunk",
    "SearchFilters",
    "chunk_headlines",
    "chunks_dense_search",
    "chunks_hydrate",
    "chunks_keyword_search",
    "headline_html",
]

DISPLAY_TITLE_WORDS = 8  # a source without a title is shown by its first words


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
