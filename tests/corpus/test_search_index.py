"""The vector and keyword indexes are the ones the queries use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from django.db import connection
from pgvector.django import L2Distance

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Chunk, Collection
from apps.corpus.search.legs import ChunkRow, SearchFilters, chunks_dense_search, dense_search_sql
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def _plan(sql: str, params: Sequence[Any]) -> str:
    with connection.cursor() as cursor:
        # With a handful of rows a sequential scan is cheaper; forbid it to see what the
        # index can serve. An index with the wrong opclass would still not be chosen.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        # Fresh statistics: earlier tests may have emptied and refilled the table.
        cursor.execute("ANALYZE corpus_chunk")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.fixture
def indexed(collection: Collection, embedder: CountingEmbedder) -> CountingEmbedder:
    # One section per paragraph: chunks never cross a heading, so this makes 30 chunks.
    text = "\n\n".join(
        f"## Part {i}\n\nParagraph {i} about topic {i}, detail {i * 7}." for i in range(30)
    )
    result = document_submit(collection=collection, filename="many.md", data=text.encode())
    document_process(document_id=result.document.pk)
    return embedder


def test_cosine_nearest_neighbour_query_uses_the_hnsw_index(indexed: CountingEmbedder) -> None:
    embedding = indexed.embed_query("topic 3").tolist()
    sql, params = dense_search_sql(embedding=embedding, filters=SearchFilters(), limit=5)

    plan = _plan(sql, params)

    assert "corpus_chunk_embedding_hnsw" in plan, plan
    found = chunks_dense_search(embedding=embedding, filters=SearchFilters(), limit=5)
    assert len(found) == 5


def test_dead_rows_from_reingestion_do_not_starve_the_scan(
    collection: Collection, indexed: CountingEmbedder
) -> None:
    """Deleted chunks stay in the HNSW graph until vacuum; iterative scans step past them."""
    document = collection.documents.get()
    text = "\n\n".join(f"## Part {i}\n\nReplacement {i} on subject {i}." for i in range(30))
    document_submit(collection=collection, filename=document.filename, data=text.encode())
    document_process(document_id=document.pk)
    embedding = indexed.embed_query("topic 3").tolist()
    with connection.cursor() as cursor:  # make the planner walk the HNSW graph, as at scale
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")

    found = chunks_dense_search(embedding=embedding, filters=SearchFilters(), limit=20, ef_search=1)

    assert len(found) == 20


def test_l2_ordering_cannot_use_the_cosine_index(indexed: CountingEmbedder) -> None:
    vector = np.ones(384, dtype=np.float32).tolist()
    query = Chunk.objects.order_by(L2Distance("embedding", vector))[:5]
    sql, params = query.query.sql_with_params()

    assert "corpus_chunk_embedding_hnsw" not in _plan(sql, list(params))


def test_full_text_query_uses_the_gin_index(indexed: CountingEmbedder) -> None:
    plan = _plan(
        "SELECT id FROM corpus_chunk WHERE search_vector @@ websearch_to_tsquery('english', %s)",
        ["topic"],
    )
    assert "corpus_chunk_search_gin" in plan, plan


def test_a_source_without_a_title_is_shown_by_its_heading_or_first_words() -> None:
    def row(title: str, filename: str, heading: str, text: str) -> ChunkRow:
        return ChunkRow(1, 1, title, filename, heading, None, text, 10, "en")

    assert row("Leave policy", "leave.md", "", "x").display_title == "Leave policy"
    # Ingestion fell back to the file's stem: a heading or the first words say more.
    assert row("p123", "p123.html", "Annual leave", "x").display_title == "Annual leave"
    words = "one two three four five six seven eight nine ten"
    assert (
        row("p123", "p123.html", "", words).display_title
        == "one two three four five six seven eight…"
    )
    assert row("", "notes.txt", "", "Short note").display_title == "Short note"
