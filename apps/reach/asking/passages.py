"""Searching and reading without asking: what an agent's `search` and `fetch` tools give.

Search runs the turn's own retrieval pipeline over the collections the caller may read and
ranks what it found as the chat's search results do (one passage per document, absolute
scores). Fetch gives one document's text or one chunk with its neighbours. A collection or
document the caller may not read is refused exactly like one that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db.models import Count, Q

from apps.answers.providers.registry import providers_default
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.turn.search_results import search_results_data
from apps.answers.turn.services import InvalidQuestion, question_clean
from apps.corpus.access import collections_readable, user_collection_ids_readable
from apps.corpus.documents.reading import document_blocks_read, document_readable_get
from apps.corpus.documents.selectors import UnknownCollection, collection_ids_resolve
from apps.corpus.models import Chunk, Document
from apps.corpus.parsing import DocumentError
from apps.corpus.search.legs import SearchFilters
from apps.reach.asking.replies import reading_url, snippet_text
from ragplatform.db_threads import db_call


class NotReadable(LookupError):
    """No such document or chunk for this caller (it does not exist, or they may not read it)."""


def collections_listed(*, user_id: int) -> list[dict[str, Any]]:
    """The collections the caller may read, by name, with how many documents each holds."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).first()
    readable = collections_readable(user=user) if user is not None else None
    if readable is None:
        return []
    rows = readable.annotate(
        documents_count=Count("documents", filter=Q(documents__chunk_count__gt=0))
    )
    return [
        {"name": c.name, "description": c.description, "documents": c.documents_count}
        for c in rows.order_by("name")
    ]


def search_scope(*, user_id: int, collection_names: Sequence[str]) -> SearchFilters:
    """The collections to search: the named ones the caller may read, or every readable one."""
    readable = user_collection_ids_readable(user_id=user_id)
    if len(collection_names) > (limit := settings.RAG_MAX_COLLECTIONS_PER_QUESTION):
        raise InvalidQuestion(f"At most {limit} collections")
    if not collection_names:
        ids = None if readable is None else tuple(sorted(readable))
        return SearchFilters(collection_ids=ids)
    try:
        names = list(dict.fromkeys(collection_names))
        return SearchFilters(collection_ids=collection_ids_resolve(names=names, among=readable))
    except UnknownCollection as exc:
        raise InvalidQuestion(str(exc)) from exc


def search_limit(requested: int | None) -> int:
    """RAG_MCP_SEARCH_LIMIT unless asked, never above RAG_MCP_SEARCH_MAX_LIMIT."""
    most = settings.RAG_MCP_SEARCH_MAX_LIMIT
    if requested is None:
        return min(settings.RAG_MCP_SEARCH_LIMIT, most)
    if requested < 1:
        raise InvalidQuestion("limit must be at least 1")
    return min(requested, most)


async def passages_search(
    *,
    user_id: int,
    query: str,
    collection_names: Sequence[str] = (),
    limit: int | None = None,
    base_url: str = "",
) -> dict[str, Any]:
    """Ranked passages for `query`; raises InvalidQuestion for a bad query, collection or limit."""
    cleaned = question_clean(query)
    count = search_limit(limit)
    filters = await db_call(search_scope)(user_id=user_id, collection_names=collection_names)
    providers = await db_call(providers_default)()
    result = await providers.retriever.retrieve(RetrievalRequest(query=cleaned, filters=filters))
    model_id = result.trace.models.get("embedder", "")
    data = await search_results_data(
        query=cleaned, chunks=result.chunks, model_id=model_id, limit=count
    )
    indexes = await db_call(_chunk_indexes)([r["chunk"] for r in data["results"]])
    results = [_result(r, indexes.get(r["chunk"]), base_url) for r in data["results"]]
    return {"query": cleaned, "matched": data["matched"], "results": results}


def _chunk_indexes(chunk_ids: list[int]) -> dict[int, int]:
    return dict(Chunk.objects.filter(pk__in=chunk_ids).values_list("pk", "index"))


def _result(result: dict[str, Any], index: int | None, base_url: str) -> dict[str, Any]:
    return {
        "rank": result["rank"],
        "title": result["title"],
        "source_file": result["source_file"],
        "page": result["page"],
        "heading": result["heading"],
        "snippet": snippet_text(result["snippet_html"]),
        "score": result["score"],
        "weak": result["weak"],
        "document": result["document"],
        "chunk": result["chunk"],
        "chunk_index": index,
        "url": reading_url(result["document"], index, base_url=base_url),
    }


def passage_fetch(
    *, user_id: int, document_id: int, chunk_id: int | None = None, base_url: str = ""
) -> dict[str, Any]:
    """One readable document's text, or one of its chunks with the chunks before and after it.
    Raises NotReadable for anything the caller may not read or that does not exist."""
    readable = user_collection_ids_readable(user_id=user_id)
    try:
        document = document_readable_get(document_id=document_id, readable=readable)
    except Document.DoesNotExist:
        raise NotReadable(f"No document {document_id}") from None
    about = {
        "document": document.pk,
        "title": document.title or document.filename,
        "source_file": document.filename,
        "collection": document.collection.name,
    }
    if chunk_id is None:
        return {
            **about,
            **_document_text(document),
            "url": reading_url(document.pk, None, base_url=base_url),
        }
    return {**about, **_chunk_with_neighbours(document, chunk_id, base_url=base_url)}


def _document_text(document: Document) -> dict[str, Any]:
    try:
        text = "\n\n".join(block.text for block in document_blocks_read(document=document))
    except (OSError, ValueError, DocumentError):  # the original is gone or unreadable: the
        # chunks still hold its text
        chunks = document.chunks.order_by("index").values_list("text", flat=True)
        text = "\n\n".join(chunks)
    limit = settings.RAG_MCP_FETCH_MAX_CHARS
    return {"text": text[:limit], "truncated": len(text) > limit}


def _chunk_with_neighbours(document: Document, chunk_id: int, *, base_url: str) -> dict[str, Any]:
    chunk = document.chunks.filter(pk=chunk_id).first()
    if chunk is None:
        raise NotReadable(f"No chunk {chunk_id} in document {document.pk}")
    around = dict(
        document.chunks.filter(index__in=(chunk.index - 1, chunk.index + 1)).values_list(
            "index", "text"
        )
    )
    return {
        "chunk": chunk.pk,
        "chunk_index": chunk.index,
        "heading": chunk.heading,
        "page": chunk.page,
        "text": chunk.text,
        "previous": around.get(chunk.index - 1),
        "next": around.get(chunk.index + 1),
        "url": reading_url(document.pk, chunk.index, base_url=base_url),
    }
