"""What a search may return, and the figures of that scope both keyword scorers need.

Reads only. `SearchFilters` turns into WHERE fragments over chunks and documents (the dense
leg) or over postings (the keyword leg); `scope_stats` counts the chunks in scope and their
mean length, the N and avgdl of BM25.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.db import connection


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


_CONFIG_FOR_LANGUAGE = {"en": "english", "fa": "simple"}


def postings_scope(filters: SearchFilters) -> tuple[str, dict[str, Any]]:
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
        where, values = filters_named(document_filters)
        subquery = f"SELECT d.id FROM corpus_document d WHERE {where}"  # noqa: S608 - constant columns
        clauses.append(f"t.document_id IN ({subquery})")
        params.update(values)
    if filters.languages:
        configs = sorted({_CONFIG_FOR_LANGUAGE.get(lang, "simple") for lang in filters.languages})
        clauses.append("t.config = ANY(%(configs)s)")
        params["configs"] = configs
    return " AND ".join(f"({c})" for c in clauses), params


# How long the figures of a scope are reused: they move slowly, and counting them reads
# every chunk in scope.
STATS_TTL_S = 60.0
_stats_cache: dict[SearchFilters, tuple[float, int, float]] = {}


def scope_stats(filters: SearchFilters) -> tuple[int, float]:
    """Chunk count and mean length of the scope; cached for STATS_TTL_S."""
    cached = _stats_cache.get(filters)
    if cached and time.monotonic() - cached[0] < STATS_TTL_S:
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


def filters_named(filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """The filter fragment with named placeholders (the keyword SQL repeats it)."""
    where, values = filters.sql()
    named: dict[str, Any] = {}
    for i, value in enumerate(values):
        where = where.replace("%s", f"%(f{i})s", 1)
        named[f"f{i}"] = value
    return where, named
