"""Search intent: ranked documents with highlighted snippets, scores and links to the source."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.urls import reverse

from apps.answers.retrieval.types import RetrievedChunk
from apps.corpus.search.legs import KeywordQuery, chunk_headlines, headline_html
from ragplatform.db_threads import db_call


def _best_chunk_per_document(chunks: Sequence[RetrievedChunk], limit: int) -> list[RetrievedChunk]:
    best: dict[int, RetrievedChunk] = {}
    for chunk in chunks:
        best.setdefault(chunk.document_id, chunk)
    return list(best.values())[:limit]


async def search_results_data(
    *, query: str, chunks: Sequence[RetrievedChunk], limit: int = 10
) -> dict[str, Any]:
    documents = _best_chunk_per_document(chunks, limit)
    headlines = await db_call(chunk_headlines, lane="search")(
        chunk_ids=[c.chunk_id for c in documents], query=KeywordQuery.from_text(query)
    )
    top = documents[0].score if documents else 1.0
    return {
        "query": query,
        "results": [
            {
                "rank": rank,
                "document": chunk.document_id,
                "chunk": chunk.chunk_id,
                "title": chunk.display_title,
                "source_file": chunk.filename,
                "page": chunk.page,
                "heading": chunk.heading,
                "score": round(chunk.score / top, 4) if top else 0.0,
                "snippet_html": headline_html(headlines.get(chunk.chunk_id, chunk.text[:300])),
                "url": reverse("document-source", args=[chunk.document_id]),
            }
            for rank, chunk in enumerate(documents, start=1)
        ],
    }
