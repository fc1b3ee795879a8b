"""What a stored turn may still show its reader: every replay path filters through here.

A turn's events keep the titles, snippets and suggestions of the documents it retrieved. When a
collection later becomes unreadable to the turn's owner, replaying the turn (the socket's
resume, the SSE replay, the chat page's history, the REST API's turns) must not hand them out
again: citations and
search results of documents the reader may no longer read are dropped, and follow-ups and
clarification topics drawn from such documents are withheld. The answer text itself stays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from apps.answers.events import Envelope, EventType
from apps.answers.models import Citation, Turn, TurnEvent
from apps.answers.routing.types import TurnAction
from apps.answers.turn.clarify import clarification_question
from apps.corpus.models import Document


@dataclass(frozen=True)
class Visible:
    """The documents a reader may see; `ids` None means every document."""

    ids: frozenset[int] | None

    def has(self, document_id: object) -> bool:
        return self.ids is None or document_id in self.ids

    def has_all(self, document_ids: Iterable[object]) -> bool:
        return all(self.has(d) for d in document_ids)


def readable_lost(*, readable: frozenset[int] | None, could_read: object) -> frozenset[int] | None:
    """The filter a stored turn needs for a reader who may read `readable` now: None (nothing to
    filter) while they still read every collection the turn could read when it was asked
    (`could_read`, the turn's `readable_collections`; None: every collection)."""
    if readable is None:
        return None
    if isinstance(could_read, list) and set(could_read) <= readable:
        return None  # nothing of the turn lies outside: even its deleted documents were readable
    return readable


def documents_visible(*, readable: frozenset[int] | None, document_ids: Iterable[int]) -> Visible:
    """Which of `document_ids` lie in the `readable` collections (None: all). A document that
    no longer exists is not visible: nobody can say which collection it was in."""
    if readable is None:
        return Visible(None)
    wanted = {d for d in document_ids if isinstance(d, int)}
    found = Document.objects.filter(pk__in=wanted, collection_id__in=readable)
    return Visible(frozenset(found.values_list("pk", flat=True)))


def turn_events_visible(
    *, turn_id: int, events: Sequence[Envelope], readable: frozenset[int] | None
) -> list[Envelope]:
    """`events` of one turn with what the reader may no longer see taken out."""
    if readable is None:
        return list(events)
    scope = _scope(turn_id, events)
    visible = documents_visible(
        readable=readable,
        document_ids=[*_document_ids([*events, *scope.clarification]), *scope.fallback],
    )
    kept: list[Envelope] = []
    for envelope in events:
        data = _data_visible(envelope, visible, scope)
        if data is not None:
            kept.append(
                Envelope(seq=envelope["seq"], turn=turn_id, type=envelope["type"], data=data)
            )
    return kept


@dataclass(frozen=True)
class _Scope:
    """What filtering `events` needs beyond them: the documents behind suggestions stored
    before they named theirs, and the clarification a `finished` event repeats."""

    fallback: tuple[int, ...]
    clarification: tuple[Envelope, ...]


def _scope(turn_id: int, events: Sequence[Envelope]) -> _Scope:
    clarification: tuple[Envelope, ...] = ()
    if any(
        e["type"] == EventType.FINISHED and e["data"].get("action") == TurnAction.CLARIFY
        for e in events
    ):
        stored = TurnEvent.objects.filter(turn_id=turn_id, type=EventType.CLARIFICATION).first()
        if stored is not None:
            clarification = (
                Envelope(seq=stored.seq, turn=turn_id, type=stored.type, data=stored.data),
            )
    legacy = {EventType.FOLLOWUPS, EventType.CLARIFICATION}
    if not any(
        e["type"] in legacy and "documents" not in e["data"] for e in [*events, *clarification]
    ):
        return _Scope((), clarification)
    cited = Citation.objects.filter(turn_id=turn_id, document__isnull=False)
    return _Scope(tuple(cited.values_list("document_id", flat=True)), clarification)


@dataclass(frozen=True)
class StoredTurnShown:
    """What a stored turn shows its reader now: the answer (a clarifying question keeps only
    the topics still readable), the follow-ups, the citations, and the shown events by type."""

    answer: str
    followups: list[str]
    citations: list[Citation]
    events: dict[str, dict[str, Any]]


def turn_stored_visible(
    *,
    turn: Turn,
    citations: Sequence[Citation],
    events: Sequence[TurnEvent],
    readable: frozenset[int] | None,
) -> StoredTurnShown:
    """A stored turn as every page and endpoint that shows it reads it: `events` are its
    stored search results, clarification and follow-ups (those the turn's columns repeat)."""
    readable = readable_lost(readable=readable, could_read=turn.readable_collections)
    stored = [Envelope(seq=e.seq, turn=turn.pk, type=e.type, data=e.data) for e in events]
    shown = {
        e["type"]: e["data"]
        for e in turn_events_visible(turn_id=turn.pk, events=stored, readable=readable)
    }
    answer, followups = turn.answer, list(turn.followups or [])
    if EventType.CLARIFICATION in shown:
        answer = shown[EventType.CLARIFICATION].get("question", answer)
    if EventType.FOLLOWUPS in shown:
        followups = list(shown[EventType.FOLLOWUPS].get("questions", []))
    return StoredTurnShown(
        answer=answer,
        followups=followups,
        citations=citations_visible(citations=citations, readable=readable),
        events=shown,
    )


def citations_visible(
    *, citations: Sequence[Citation], readable: frozenset[int] | None
) -> list[Citation]:
    visible = documents_visible(
        readable=readable, document_ids=[c.document_id for c in citations if c.document_id]
    )
    return [c for c in citations if visible.has(c.document_id)]


def _document_ids(events: Sequence[Envelope]) -> list[int]:
    ids: list[object] = []
    for envelope in events:
        data = envelope["data"]
        ids.extend(data.get("documents") or [])
        ids.extend(r.get("document") for r in data.get("results") or [])
        if envelope["type"] == EventType.CITATION:
            ids.append(data.get("document"))
    return [i for i in ids if isinstance(i, int)]


def _data_visible(envelope: Envelope, visible: Visible, scope: _Scope) -> dict[str, Any] | None:
    kind, data = envelope["type"], envelope["data"]
    fallback = scope.fallback
    if kind == EventType.CITATION:
        return data if visible.has(data.get("document")) else None
    if kind == EventType.SEARCH_RESULTS:
        results = [r for r in data.get("results") or [] if visible.has(r.get("document"))]
        return {**data, "results": [{**r, "rank": n} for n, r in enumerate(results, start=1)]}
    if kind == EventType.FOLLOWUPS:
        sources = data.get("documents", fallback)
        return data if visible.has_all(sources) else {**data, "questions": []}
    if kind == EventType.CLARIFICATION:
        return _clarification_visible(data, visible, fallback)
    if (
        kind == EventType.FINISHED
        and data.get("action") == TurnAction.CLARIFY
        and scope.clarification
    ):
        # The finished event repeats the clarifying question, topics included.
        clarified = _clarification_visible(scope.clarification[0]["data"], visible, fallback)
        return {**data, "answer": clarified["question"]}
    return data


def _clarification_visible(
    data: dict[str, Any], visible: Visible, fallback: Sequence[int]
) -> dict[str, Any]:
    options = list(data.get("options") or [])
    sources = data.get("documents")
    if sources is None:  # stored before options named their documents
        kept = options if visible.has_all(fallback) else []
        sources = []
    else:
        kept = [o for o, d in zip(options, sources, strict=False) if visible.has(d)]
    if kept == options:
        return data
    question = clarification_question(language=data.get("language", "en"), options=kept)
    kept_sources = [d for d in sources if visible.has(d)]
    return {**data, "question": question, "options": kept, "documents": kept_sources}
