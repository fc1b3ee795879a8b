"""What the door answers, in OpenAI's shapes: a `chat.completion`, or a stream of
`chat.completion.chunk` server-sent events ending with `data: [DONE]`.

Besides OpenAI's own fields each carries the platform's, which clients that do not know them
ignore: `citations` (the sources as data), `confidence` ({value, band}, null without an
answer to rate), `conversation` (to continue it) and `turn` (the audit's id).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import close_old_connections

from apps.answers.events import Envelope, EventType
from apps.answers.models import CitationKind
from apps.answers.turn.live import with_keepalive
from apps.reach.asking.replies import Reply, reply_read, sources_block
from apps.reach.openai_api.errors import error_data
from ragplatform.db_threads import db_call

DONE = "data: [DONE]\n\n"
PING = ": ping\n\n"
# A turn that failed: the status OpenAI clients read as the server's (or its model's) fault.
FAILED_STATUS = {
    "model_unavailable": 503,
    "model_timeout": 504,
    "interrupted": 503,
    "cancelled": 409,  # a newer question in the same conversation superseded it
}


@dataclass(frozen=True)
class Completion:
    """One completion's constant fields."""

    turn_id: int
    model: str
    created: int

    @property
    def id(self) -> str:
        return f"chatcmpl-{self.turn_id}"

    def head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}


def reply_extras(reply: Reply) -> dict[str, Any]:
    return {
        "citations": [s.data() for s in reply.sources],
        "confidence": reply.confidence_data(),
        "conversation": str(reply.conversation_id),
        "turn": reply.turn_id,
    }


def completion_body(completion: Completion, reply: Reply) -> dict[str, Any]:
    message = {"role": "assistant", "content": reply.text}
    return {
        **completion.head("chat.completion"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": reply.usage.data(),
        **reply_extras(reply),
    }


def failed_body(reply: Reply) -> tuple[dict[str, Any], int]:
    """A turn that failed, as an error with its status (a partial answer is not a reply)."""
    status = FAILED_STATUS.get(reply.error_code, 502 if reply.error_code else 500)
    message = reply.error_message or "The answer failed"
    return error_data(message=message, code=reply.error_code, status_code=status), status


@dataclass
class _Streamed:
    numbers: dict[str, int] = field(default_factory=dict)  # alias -> marker number
    text: bool = False  # any of the reply's text sent yet


async def completion_chunks(
    *, completion: Completion, events: AsyncIterator[Envelope], base_url: str, include_usage: bool
) -> AsyncIterator[str]:
    """The turn's events as chunks: its text as it is written, a "[n]" marker the moment a
    citation closes, at its end the sources list, then a last chunk with finish_reason,
    usage and the platform's fields. A turn that fails ends with an error event."""
    # The stream may last minutes and needs no connection of the request's own.
    await db_call(close_old_connections)()
    yield _sse(_chunk(completion, {"role": "assistant", "content": ""}))
    streamed = _Streamed()
    async for envelope in with_keepalive(events, every_s=settings.RAG_KEEPALIVE_S):
        if envelope is None:
            yield PING  # a comment: clients ignore it, proxies see a live stream
            continue
        for piece in await _pieces(completion, envelope, streamed, base_url, include_usage):
            yield piece
        if envelope["type"] in (EventType.FINISHED, EventType.FAILED):
            break
    yield DONE


async def _pieces(
    completion: Completion,
    envelope: Envelope,
    streamed: _Streamed,
    base_url: str,
    include_usage: bool,
) -> list[str]:
    kind, data = envelope["type"], envelope["data"]
    if kind == EventType.TOKEN and data.get("text"):
        streamed.text = True
        return [_sse(_chunk(completion, {"content": data["text"]}))]
    if kind == EventType.CITATION and data.get("kind", CitationKind.CITED) == CitationKind.CITED:
        number = streamed.numbers.setdefault(str(data.get("alias")), len(streamed.numbers) + 1)
        return [_sse(_chunk(completion, {"content": f"[{number}]"}))]
    if kind == EventType.FAILED:
        code = str(data.get("code", ""))
        status = FAILED_STATUS.get(code, 502)
        return [
            _sse(error_data(message=str(data.get("message", "")), code=code, status_code=status))
        ]
    if kind == EventType.FINISHED:
        reply = await db_call(reply_read)(turn_id=completion.turn_id, base_url=base_url)
        return _ending(completion, reply, streamed, include_usage)
    return []


def _ending(
    completion: Completion, reply: Reply, streamed: _Streamed, include_usage: bool
) -> list[str]:
    # A reply that streamed no text (a clarifying question, search results) is sent whole.
    rest = sources_block(reply.sources) if streamed.text else reply.text
    pieces = [_sse(_chunk(completion, {"content": rest}))] if rest else []
    last = _chunk(completion, {}, finish_reason="stop")
    last.update({"usage": reply.usage.data(), **reply_extras(reply)})
    pieces.append(_sse(last))
    if include_usage:  # OpenAI's own place for it: a chunk with no choices
        usage = {
            **completion.head("chat.completion.chunk"),
            "choices": [],
            "usage": reply.usage.data(),
        }
        pieces.append(_sse(usage))
    return pieces


def _chunk(
    completion: Completion, delta: dict[str, Any], *, finish_reason: str | None = None
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
    return {**completion.head("chat.completion.chunk"), "choices": [choice]}


def _sse(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"
