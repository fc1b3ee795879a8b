"""What the chat's source preview shows for one citation of a turn.

The asker's own turns only; the cited document must still be readable to them (else the
answer is the same NotFound as for a citation that does not exist). The panel shows the cited
chunk with the sentence that best supports the answer's cited sentence highlighted, its place
in the document, and links to the chunks around it and to the whole document.
"""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse

from apps.answers.conversations.selectors import NotFound
from apps.answers.models import Citation, CitationKind, Turn
from apps.answers.turn.citation_numbers import citation_numbers, split_last_sentence
from apps.answers.turn.selectors import turn_get
from apps.corpus.access import user_collection_ids_readable
from apps.corpus.documents.reading import (
    ChunkView,
    chunk_payload,
    chunk_view_get,
    document_readable_get,
)
from apps.corpus.models import Document
from apps.corpus.text import sentence_spans

_WORD = re.compile(r"\w{3,}")


def citation_preview_get(*, turn_id: int, user_id: int, alias: str) -> dict[str, Any]:
    turn = turn_get(turn_id=turn_id, user_id=user_id)
    citations = list(Citation.objects.filter(turn=turn, kind=CitationKind.CITED))
    citation = next((c for c in citations if c.alias == alias), None)
    if citation is None or citation.document_id is None:
        raise NotFound("No such source")
    try:
        document = document_readable_get(
            document_id=citation.document_id,
            readable=user_collection_ids_readable(user_id=user_id),
        )
    except Document.DoesNotExist:
        raise NotFound("No such source") from None
    chunk = _cited_chunk(citation, document)
    supported = _supported_sentence(turn, citation)
    return {
        "alias": citation.alias,
        "number": citation_numbers(citations).get(citation.alias),
        "title": document.title or document.filename,
        "filename": document.filename,
        "collection": document.collection.name,
        "download_url": reverse("document-source", args=[document.pk]),
        "supported_sentence": supported,
        "chunk": {
            **chunk_payload(document=document, chunk=chunk),
            "highlight": sentence_best_match(chunk.text, supported),
        },
    }


def _cited_chunk(citation: Citation, document: Document) -> ChunkView:
    """The chunk as stored now, or the citation's own copy when re-ingestion replaced it."""
    stored = citation.chunk
    found = chunk_view_get(document=document, index=stored.index) if stored else None
    if found is not None:
        return found
    return ChunkView(
        index=-1,
        text=citation.snippet,
        heading="",
        page=citation.page,
        has_previous=False,
        has_next=False,
        ocr_confidence=None,
    )


def _supported_sentence(turn: Turn, citation: Citation) -> str:
    """The answer's sentence that the citation's marker closed."""
    if citation.position is None:
        return ""
    _, sentence = split_last_sentence(turn.answer[: citation.position])
    return sentence.strip()


def sentence_best_match(text: str, claim: str) -> list[int] | None:
    """[start, end] of the sentence of `text` sharing most words with `claim`, or None if
    none shares any (then nothing is highlighted rather than a guess)."""
    wanted = {w.casefold() for w in _WORD.findall(claim)}
    best: tuple[float, list[int]] | None = None
    for start, end in sentence_spans(text, persian_marks=True):
        words = {w.casefold() for w in _WORD.findall(text[start:end])}
        score = len(wanted & words) / (len(words) ** 0.5 or 1)
        if score > 0 and (best is None or score > best[0]):
            best = (score, [start, len(text[:end].rstrip())])
    return best[1] if best else None
