"""HTTP side of a turn: the chat page, and the SSE endpoints for clients without WebSockets.

Views gate (login, Accept header, request shape) and forward; the turn service does the work.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import close_old_connections
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.answers.conversations.selectors import conversations_for_user
from apps.answers.events import EventType, rejection
from apps.answers.models import Citation, CitationKind, Conversation, Turn, TurnClient, TurnEvent
from apps.answers.turn.citation_numbers import citation_numbers
from apps.answers.turn.entry import (
    conversation_id_parse,
    turn_follow,
    turn_launch,
    turn_open,
)
from apps.answers.turn.live import with_keepalive
from apps.answers.turn.rejections import REJECTIONS, rejection_code
from apps.answers.turn.replay import turn_stored_visible
from apps.answers.turn.search_results import table_rows_as_rows
from apps.answers.turn.selectors import turn_get
from apps.answers.turn.services import InvalidQuestion
from apps.answers.web.conversation_views import chat_sidebar_context
from apps.corpus.access import user_collection_ids_readable
from apps.corpus.text.readable import readable_title
from ragplatform.db_threads import db_call
from ragplatform.errors import FailureCode, json_error
from ragplatform.gates import methods_allowed, signed_in_required
from ragplatform.session_check import DATABASE_UNREACHABLE_ERRORS, UNREACHABLE_MESSAGE

SSE = "text/event-stream"
logger = logging.getLogger(__name__)
SSE_PING = ": ping\n\n"
MAX_SEQ_DIGITS = 18  # below 2**63: the stored sequence numbers are bigint at most
_MARK = re.compile(r"(</?mark>)", re.IGNORECASE)

# --- The chat page -------------------------------------------------------------------------


@login_required
def chat_page(request: HttpRequest, conversation_id: UUID | None = None) -> HttpResponse:
    user_id: int = request.user.pk  # type: ignore[assignment]  # login_required: a real user
    conversation = None
    if conversation_id is not None:
        mine = conversations_for_user(user_id=user_id)
        conversation = mine.filter(pk=conversation_id).first()
        if conversation is None:
            raise Http404("No such conversation")
    turns = _turns(conversation, user_id=user_id) if conversation else []
    context = {
        **chat_sidebar_context(request, user_id=user_id, conversation=conversation),
        "current_id": str(conversation.pk) if conversation else "",
        "conversation": conversation,
        "conversation_question": turns[0]["turn"].question if turns else "",
        "turns": turns,
        "ws_path": "/ws/chat/",
        "max_question_chars": settings.RAG_MAX_QUESTION_CHARS,
        "login_url": settings.LOGIN_URL,
    }
    return render(request, "answers/chat.html", context)


_SHOWN_EVENTS = (EventType.SEARCH_RESULTS, EventType.CLARIFICATION, EventType.FOLLOWUPS)


def _turns(conversation: Conversation, *, user_id: int) -> list[dict[str, Any]]:
    cited = Citation.objects.filter(kind=CitationKind.CITED).order_by("position", "alias")
    shown = TurnEvent.objects.filter(type__in=_SHOWN_EVENTS).order_by("seq")
    turns = (
        conversation.turns.order_by("index")
        .select_related("feedback")
        .prefetch_related(
            Prefetch("citations", queryset=cited, to_attr="cited"),
            Prefetch("events", queryset=shown, to_attr="shown_events"),
        )
    )
    readable = user_collection_ids_readable(user_id=user_id)
    return [_turn_view(turn, readable) for turn in turns]


def _turn_view(turn: Turn, readable: frozenset[int] | None) -> dict[str, Any]:
    """What the page shows of a stored turn, without what its reader may no longer read."""
    numbers = citation_numbers(turn.cited)  # type: ignore[attr-defined]
    shown = turn_stored_visible(
        turn=turn,
        citations=turn.cited,  # type: ignore[attr-defined]
        events=turn.shown_events,  # type: ignore[attr-defined]
        readable=readable,
    )
    citations = [_citation_view(numbers[c.alias], c) for c in shown.citations]
    search = shown.events.get(EventType.SEARCH_RESULTS, {})
    results = [
        {
            **r,
            # Turns stored before titles and table rows were made readable show them so too.
            "title": readable_title(r.get("title", ""), filename=r.get("source_file", "")),
            "snippet": mark_only_html(table_rows_as_rows(r.get("snippet_html", ""))),
        }
        for r in search.get("results", [])
    ]
    turn.answer, turn.followups = shown.answer, shown.followups  # what the template reads
    return {
        "turn": turn,
        "segments": _segments(turn.answer, citations),
        "citations": citations,
        "feedback": getattr(turn, "feedback", None),  # reverse one-to-one: absent is an error
        "results": [r for r in results if not r.get("weak")],
        "weak_results": [r for r in results if r.get("weak")],
        "matched": search.get("matched", True),  # turns stored before scores were absolute
        # The same data the live page builds from events, so chat.js renders both alike.
        "render_id": f"turn-render-{turn.pk}",
        "render": {"answer": turn.answer, "citations": citations},
    }


def _citation_view(number: int, citation: Citation) -> dict[str, Any]:
    # A link that reads the document in the page; the preview panel opens on a plain click.
    url = reverse("document-read", args=[citation.document_id]) if citation.document_id else ""
    return {
        "number": number,
        "alias": citation.alias,
        "offset": citation.position,
        "url": url,
        "title": citation.title or citation.source_file,
        "page": citation.page,
        "snippet": citation.snippet,
    }


def _segments(answer: str, citations: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer cut at each citation's offset, so the template places the chips inline."""
    segments: list[dict[str, Any]] = []
    start = 0
    end = len(answer)
    # A citation without an offset goes at the end, as the page does with it.
    for citation in sorted(citations, key=lambda c: end if c["offset"] is None else c["offset"]):
        offset = min(max(end if citation["offset"] is None else citation["offset"], start), end)
        segments.append({"text": answer[start:offset]})
        segments.append({"citation": citation})
        start = offset
    segments.append({"text": answer[start:]})
    return segments


def mark_only_html(html: object) -> SafeString:
    """Search snippets are escaped text plus <mark>: keep exactly that, escape anything else."""
    parts = _MARK.split(str(html))
    # The text parts are already escaped: escaping again and then restoring "&" keeps their
    # entities as they are while any stray "<" or ">" becomes text.
    return mark_safe(  # noqa: S308 - every part is escaped except the two literal tags
        "".join(
            part.lower() if i % 2 else escape(part).replace("&amp;", "&")
            for i, part in enumerate(parts)
        )
    )


# --- SSE ---------------------------------------------------------------------------------
# The answer runs detached from the request: a client that goes away cancels nothing and
# resumes with GET /api/turns/<id>/events (Last-Event-ID or ?last_seq=), on any process.


@methods_allowed("POST")
@signed_in_required
async def turns_create(request: HttpRequest) -> HttpResponseBase:
    user = await request.auser()
    if SSE not in request.headers.get("Accept", ""):
        return json_error(FailureCode.NOT_ACCEPTABLE, f"This endpoint streams; send Accept: {SSE}")
    try:
        body = json.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise InvalidQuestion("The body must be a JSON object")
        opened = await turn_open(
            user_id=user.pk,
            conversation_id=conversation_id_parse(body.get("conversation")),
            question=body.get("question"),  # type: ignore[arg-type]  # validated there
            collection_names=body.get("collections") or (),
            client=TurnClient.SSE,
        )
    except REJECTIONS as exc:
        return json_error(rejection_code(exc), str(exc))
    except ValueError:  # malformed JSON
        return json_error(FailureCode.INVALID_REQUEST, "The body is not valid JSON")
    turn = opened.turn
    turn_launch(turn_id=turn.pk, filters=opened.filters)
    response = _stream(turn_follow(turn_id=turn.pk, user_id=user.pk, asker=opened.asker))
    response["X-Turn-Id"] = str(turn.pk)
    response["X-Conversation-Id"] = str(turn.conversation_id)
    return response


@methods_allowed("GET")
@signed_in_required
async def turn_events_replay(request: HttpRequest, turn_id: int) -> HttpResponseBase:
    user = await request.auser()
    if SSE not in request.headers.get("Accept", ""):
        return json_error(FailureCode.NOT_ACCEPTABLE, f"This endpoint streams; send Accept: {SSE}")
    last_seq = seq_parse(request.GET.get("last_seq", request.headers.get("Last-Event-ID", "0")))
    if last_seq is None:
        return json_error(FailureCode.INVALID_REQUEST, "last_seq must be a non-negative integer")
    try:
        await db_call(turn_get)(turn_id=turn_id, user_id=user.pk)
    except REJECTIONS as exc:
        return json_error(rejection_code(exc), str(exc))
    return _stream(turn_follow(turn_id=turn_id, user_id=user.pk, last_seq=last_seq))


def seq_parse(raw: str) -> int | None:
    """ASCII digits only (str.isdigit() also takes "²"), and small enough for the database."""
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit()) or len(raw) > MAX_SEQ_DIGITS:
        return None
    return int(raw)


def _stream(events: AsyncIterator[Any]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(_sse(events), content_type=SSE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the stream back
    return response


async def _sse(events: AsyncIterator[Any]) -> AsyncIterator[str]:
    # The stream may last minutes and needs no connection of the request's own: give it back
    # now (with DATABASE_CONN_MAX_AGE 0) rather than when the stream ends.
    await db_call(close_old_connections)()
    try:
        async for envelope in with_keepalive(events, every_s=settings.RAG_KEEPALIVE_S):
            # A comment line while idle: clients ignore it, proxies see a live stream.
            yield SSE_PING if envelope is None else sse_format(envelope)
    except DATABASE_UNREACHABLE_ERRORS:
        # An exception would leave the response open and silent (daphne logs it and sends
        # nothing more); the stream ends instead, saying why, for the client to resume.
        logger.warning("An event stream lost the database; ended for its client to resume")
        yield sse_unavailable()


def sse_unavailable() -> str:
    """The typed `unavailable` end of a stream: a failed event of no turn (seq 0, as a socket
    refusal) and without an `id:` line, so an EventSource reconnects with Last-Event-ID still
    its last stored event and resumes from there."""
    envelope = rejection(FailureCode.UNAVAILABLE, UNREACHABLE_MESSAGE)
    data = json.dumps(envelope, separators=(",", ":"))
    return f"event: {EventType.FAILED}\ndata: {data}\n\n"


def sse_format(envelope: dict[str, Any]) -> str:
    data = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    return f"id: {envelope['seq']}\nevent: {envelope['type']}\ndata: {data}\n\n"
