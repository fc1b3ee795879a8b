"""A turn's reply as another client shows it: plain text with numbered markers ("[1]") where
the chat page puts its citation chips, a sources list after it, and the same sources as data.

A client that shows only the text still shows where each statement comes from; one that
reads the data gets the file, chunk, page, snippet and reading-page link of each source, and
the confidence with its band. Numbers follow the chat page's (`citation_numbers`): cited
sources 1, 2, 3 in the order of their place in the answer; attributed ones follow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any
from uuid import UUID

from django.urls import reverse

from apps.answers.events import EventType
from apps.answers.models import Citation, CitationKind, Turn, TurnStatus
from apps.answers.turn.citation_numbers import citation_numbers
from apps.corpus.text import estimate_tokens

_MARK = re.compile(r"</?mark>", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    number: int
    kind: str  # cited (a marker in the text) or attributed (afterwards)
    title: str
    source_file: str
    document: int | None
    chunk: int | None
    chunk_index: int | None  # None once the chunk is gone (the copied text stays)
    page: int | None
    snippet: str
    url: str  # the reading page at the chunk; "" once the document is gone

    def data(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int

    def data(self) -> dict[str, int]:
        total = self.prompt_tokens + self.completion_tokens
        return {**asdict(self), "total_tokens": total}


@dataclass(frozen=True)
class Reply:
    turn_id: int
    conversation_id: UUID
    status: str  # the turn's status
    action: str
    text: str  # the reply with markers, then its sources list
    sources: tuple[Source, ...]
    confidence: float | None
    band: str  # "" when there is no answer to rate
    error_code: str
    error_message: str
    usage: Usage

    @property
    def finished(self) -> bool:
        return self.status == TurnStatus.FINISHED

    def confidence_data(self) -> dict[str, Any] | None:
        if self.confidence is None:
            return None
        return {"value": self.confidence, "band": self.band}


def reply_read(*, turn_id: int, base_url: str) -> Reply:
    """The stored reply of a turn that has ended. `base_url` makes the links absolute
    ("" keeps them as paths, for a client on the platform's own host)."""
    turn = Turn.objects.get(pk=turn_id)
    citations = list(turn.citations.select_related("chunk").order_by("position", "pk"))
    sources = sources_numbered(citations, base_url=base_url)
    body = turn.answer or _results_text(turn)
    text = text_marked(body, citations=citations) + sources_block(sources)
    return Reply(
        turn_id=turn.pk,
        conversation_id=turn.conversation_id,
        status=turn.status,
        action=turn.action,
        text=text,
        sources=tuple(sources),
        confidence=turn.confidence,
        band=turn.confidence_band,
        error_code=turn.error_code,
        error_message=turn.error_message,
        usage=usage_of(turn, text=text),
    )


def sources_numbered(citations: Sequence[Citation], *, base_url: str) -> list[Source]:
    numbers = citation_numbers(citations)
    cited = sorted((c for c in citations if c.alias in numbers), key=lambda c: numbers[c.alias])
    attributed = [c for c in citations if c.kind == CitationKind.ATTRIBUTED]
    return [
        source_of(c, number=n, base_url=base_url)
        for n, c in enumerate([*cited, *attributed], start=1)
    ]


def source_of(citation: Citation, *, number: int, base_url: str) -> Source:
    chunk_index = citation.chunk.index if citation.chunk is not None else None
    return Source(
        number=number,
        kind=citation.kind,
        title=citation.title or citation.source_file,
        source_file=citation.source_file,
        document=citation.document_id,
        chunk=citation.chunk_id,
        chunk_index=chunk_index,
        page=citation.page,
        snippet=citation.snippet,
        url=reading_url(citation.document_id, chunk_index, base_url=base_url),
    )


def reading_url(document_id: int | None, chunk_index: int | None, *, base_url: str) -> str:
    if document_id is None:
        return ""
    path = reverse("document-read", args=[document_id])
    if chunk_index is not None:
        path = f"{path}?chunk={chunk_index}#cited"
    return f"{base_url.rstrip('/')}{path}"


def text_marked(answer: str, *, citations: Sequence[Citation]) -> str:
    """The answer with "[n]" at each cited source's place (its offset in the answer)."""
    numbers = citation_numbers(citations)
    end = len(answer)
    places = sorted(
        (end if c.position is None else min(c.position, end), numbers[c.alias])
        for c in citations
        if c.kind == CitationKind.CITED and c.alias in numbers
    )
    parts, start = [], 0
    for offset, number in places:
        parts.append(f"{answer[start:offset]}[{number}]")
        start = offset
    return "".join(parts) + answer[start:]


def sources_block(sources: Sequence[Source]) -> str:
    """The sources list after the text, one line each; "" with no sources."""
    if not sources:
        return ""
    return "\n\nSources:\n" + "\n".join(source_line(s) for s in sources)


def source_line(source: Source) -> str:
    where = source.source_file + (f", page {source.page}" if source.page else "")
    line = f"[{source.number}] {source.title} ({where})"
    return f"{line} {source.url}" if source.url else line


def snippet_text(html: object) -> str:
    """A search snippet without its <mark> highlighting (the text is escaped already)."""
    from html import unescape

    return unescape(_MARK.sub("", str(html)))


def _results_text(turn: Turn) -> str:
    """A search turn's reply: its documents as a numbered list (no answer to mark)."""
    event = turn.events.filter(type=EventType.SEARCH_RESULTS).first()
    results = (event.data if event is not None else {}).get("results") or []
    return "\n".join(
        f"{r['rank']}. {r.get('title') or r.get('source_file')}: {snippet_text(r.get('snippet_html', ''))}"
        for r in results
    )


def usage_of(turn: Turn, *, text: str) -> Usage:
    """The model's own counts when a model wrote the reply, else an estimate (the offline
    composer counts no tokens): the question in, the reply out."""
    prompt = (
        turn.prompt_tokens if turn.prompt_tokens is not None else estimate_tokens(turn.question)
    )
    completion = turn.completion_tokens
    return Usage(prompt, completion if completion is not None else estimate_tokens(text))
