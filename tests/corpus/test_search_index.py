"""The vector and keyword indexes are the ones the queries use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from django.db import connection
from pgvector.django import L2Distance

from apps.corpus.models import Chunk, Collection
from apps.corpus.selectors import chunks_nearest
from apps.corpus.services import document_process, document_submit
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def _plan(sql: str, params: Sequence[Any]) -> str:
    with connection.cursor() as cursor:
        # With a handful of rows a sequential scan is cheaper; forbid it to see what the
        # index can serve. An index with the wrong opclass would still not be chosen.
        cursor.execute("SET LOCAL enable_seqscan = off")
        # Fresh statistics: earlier tests may have emptied and refilled the table.
        cursor.execute("ANALYZE corpus_chunk")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.fixture
def indexed(collection: Collection, embedder: CountingEmbedder) -> CountingEmbedder:
    text = "\n\n".join(f"Paragraph {i} about topic {i} and detail {i * 7}." for i in range(30))
    result = document_submit(collection=collection, filename="many.txt", data=text.encode())
    document_process(document_id=result.document.pk)
    return embedder


def test_cosine_nearest_neighbour_query_uses_the_hnsw_index(indexed: CountingEmbedder) -> None:
    query = chunks_nearest(embedding=indexed.embed_query("topic 3").tolist(), limit=5)
    sql, params = query.query.sql_with_params()

    plan = _plan(sql, list(params))

    assert "corpus_chunk_embedding_hnsw" in plan, plan
    assert len(list(query)) >= 1


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
