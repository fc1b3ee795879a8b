"""Search intent: ranked documents with highlighted snippets, scores and links to the source.

Each result's score is its absolute relevance (retrieval/relevance.py: a probability that it
matches, comparable across queries), not a share of the best result's. A result below
RAG_SEARCH_MATCH_FROM is marked `weak`; when every result is weak the event says so in the
question's language (`matched` false and a `message`), and readers show the results under a
"weak matches" label instead of as matches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.urls import reverse

from apps.answers.retrieval.relevance import relevance
from apps.answers.retrieval.types import RetrievedChunk
from apps.corpus.search.legs import KeywordQuery, chunk_headlines, headline_html
from apps.corpus.text import detect_language, fence_marks_removed
from apps.corpus.text.readable import readable_title
from ragplatform.db_threads import db_call

_NOTHING_MATCHES = {
    "en": "Nothing in the documents matches “{query}”.",
    "fa": "در اسناد چیزی مطابق با «{query}» پیدا نشد.",
}


_TABLE_CELL = re.compile(r"\s*\|\s*")
_TABLE_RULE = re.compile(r"^[\s|:\-]*$")
CELL_SEPARATOR = " · "


def table_rows_as_rows(text: str) -> str:
    """A snippet cut from a Markdown table, as rows: each row on a line of its own with its
    cells between separators, the |---| rule gone; other lines run on as prose. Works on the
    plain headline and on its escaped HTML alike (neither escaping nor <mark> touches | or -)."""
    parts: list[tuple[bool, str]] = []
    for line in text.splitlines():
        if line.count("|") < 2:
            if line.strip():
                parts.append((False, line.strip()))
            continue
        if _TABLE_RULE.match(line):
            continue  # the header rule: no content of its own
        cells = [c for c in _TABLE_CELL.split(line.strip().strip("|").strip()) if c]
        parts.append((True, CELL_SEPARATOR.join(cells)))
    joined = ""
    for n, (is_row, piece) in enumerate(parts):
        if n:
            joined += "\n" if is_row or parts[n - 1][0] else " "
        joined += piece
    return joined


def _best_chunk_per_document(chunks: Sequence[RetrievedChunk], limit: int) -> list[RetrievedChunk]:
    best: dict[int, RetrievedChunk] = {}
    for chunk in chunks:
        best.setdefault(chunk.document_id, chunk)
    return list(best.values())[:limit]


def nothing_matches_message(query: str) -> str:
    language = detect_language(query)
    return _NOTHING_MATCHES.get(language, _NOTHING_MATCHES["en"]).format(query=query.strip())


async def search_results_data(
    *, query: str, chunks: Sequence[RetrievedChunk], model_id: str = "", limit: int = 10
) -> dict[str, Any]:
    """`model_id` is the embedding model the chunks were found with (its cosines' scale)."""
    documents = _best_chunk_per_document(chunks, limit)
    headlines = await db_call(chunk_headlines, lane="search")(
        chunk_ids=[c.chunk_id for c in documents], query=KeywordQuery.from_text(query)
    )
    scores = [relevance(c.candidate, model_id=model_id) for c in documents]
    match_from = settings.RAG_SEARCH_MATCH_FROM
    matched = any(score >= match_from for score in scores)
    data: dict[str, Any] = {
        "query": query,
        "matched": matched,
        "results": [
            {
                "rank": rank,
                "document": chunk.document_id,
                "chunk": chunk.chunk_id,
                "title": readable_title(chunk.display_title, filename=chunk.filename),
                "source_file": chunk.filename,
                "page": chunk.page,
                "heading": chunk.heading,
                "score": round(score, 4),
                "weak": score < match_from,
                "snippet_html": headline_html(
                    table_rows_as_rows(
                        fence_marks_removed(headlines.get(chunk.chunk_id, chunk.text[:300]))
                    )
                ),
                "url": reverse("document-source", args=[chunk.document_id]),
            }
            for rank, (chunk, score) in enumerate(zip(documents, scores, strict=True), start=1)
        ],
    }
    if not matched:
        data["message"] = nothing_matches_message(query)
    return data
