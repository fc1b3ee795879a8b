"""What the widget reads: the turn's typed events as SSE (the chat's own format), each cited
source numbered as it closes, and at the end one `reply` event with the stored answer, its
sources (with links to the reading pages) and the confidence, the same data /v1 returns."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from django.conf import settings
from django.db import close_old_connections

from apps.answers.events import Envelope, EventType
from apps.answers.models import CitationKind
from apps.answers.turn.live import with_keepalive
from apps.answers.web.views import SSE_PING, sse_format
from apps.reach.asking.replies import Reply, reply_read, sources_block
from ragplatform.db_threads import db_call

# What the widget shows; the rest (classification, search results) is the chat page's.
_FORWARDED = frozenset(
    {EventType.TOKEN, EventType.CITATION, EventType.CLARIFICATION, EventType.CONFIDENCE}
)


def reply_event(reply: Reply, *, turn_id: int) -> dict[str, Any]:
    answer = reply.text.removesuffix(sources_block(reply.sources))
    data = {
        "answer": answer,
        "sources": [source.data() for source in reply.sources],
        "confidence": reply.confidence_data(),
        "status": reply.status,
    }
    return {"seq": 0, "turn": turn_id, "type": "reply", "data": data}


async def widget_sse(
    *, turn_id: int, events: AsyncIterator[Envelope], base_url: str
) -> AsyncIterator[str]:
    await db_call(close_old_connections)()  # the stream needs no connection of its own
    numbers: dict[str, int] = {}
    async for envelope in with_keepalive(events, every_s=settings.RAG_KEEPALIVE_S):
        if envelope is None:
            yield SSE_PING
            continue
        kind = envelope["type"]
        if kind == EventType.CITATION:
            envelope = _numbered(envelope, numbers)
        if kind in _FORWARDED or kind == EventType.FAILED:
            yield sse_format(dict(envelope))
        if kind == EventType.FINISHED:
            reply = await db_call(reply_read)(turn_id=turn_id, base_url=base_url)
            yield sse_format(reply_event(reply, turn_id=turn_id))


def _numbered(envelope: Envelope, numbers: dict[str, int]) -> Envelope:
    """Cited sources take 1, 2, 3 as their markers close, as the chat page numbers them."""
    data = dict(envelope["data"])
    if data.get("kind") != CitationKind.ATTRIBUTED:
        alias = str(data.get("alias"))
        data["number"] = numbers.setdefault(alias, len(numbers) + 1)
    return {**envelope, "data": data}
