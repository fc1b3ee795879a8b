"""The chat WebSocket (/ws/chat/): gate each message, then forward a turn's typed events.

Client messages:
    {"type": "ask", "question": "...", "conversation": "<uuid>"?, "collections": ["name"]?}
    {"type": "cancel"}
    {"type": "resume", "turn": <id>, "last_seq": <n>}

The socket owns one task per active answer and never streams inside `receive_json`, so a
cancel is read while an answer is streaming. The task is cancelled on `cancel`, on a new
`ask`, and on disconnect; a dropped socket gets a short grace period first, so a client
that reconnects with `resume` continues the same answer instead of finding it cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from apps.answers.events import TERMINAL_EVENTS, Envelope, EventType, FailureCode, failed_data
from apps.answers.refusals import REFUSALS, refusal_code
from apps.answers.selectors import turn_events_since, turn_get
from apps.answers.turn.entry import (
    conversation_id_parse,
    turn_abandon,
    turn_events,
    turn_follow,
    turn_open,
)
from ragplatform.session_check import session_user_id

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
RESUME_GRACE_S = 15.0
_BROKE = "Something went wrong while answering; please try again."

Listener = Callable[[Envelope], None]
_LIVE: dict[int, LiveAnswer] = {}  # answers running in this process, by turn id
_BACKGROUND: set[asyncio.Task[None]] = set()


class LiveAnswer:
    """One answer running in this process, remembering what it produced so that a socket
    that resumes it gets the backlog and the live rest with no gap and no duplicate."""

    def __init__(self, *, turn_id: int, events: AsyncIterator[Envelope]) -> None:
        self.turn_id = turn_id
        self.produced: list[Envelope] = []
        self.listener: Listener | None = None
        self.owner: object = None
        self._expiry: asyncio.TimerHandle | None = None
        self.task = asyncio.create_task(self._run(events))
        _LIVE[turn_id] = self

    @property
    def last_seq(self) -> int:
        return self.produced[-1]["seq"] if self.produced else 0

    @property
    def ended(self) -> bool:
        return bool(self.produced) and self.produced[-1]["type"] in TERMINAL_EVENTS

    async def _run(self, events: AsyncIterator[Envelope]) -> None:
        # The only await here is the next event, so a cancel always lands inside the turn.
        try:
            async for envelope in events:
                self._publish(envelope)
        except Exception:
            # turn_run turns its own errors into a failed event; this is everything else.
            logger.exception("The answer to turn %s broke off", self.turn_id)
            if not self.ended:
                self._publish(
                    await turn_abandon(
                        turn_id=self.turn_id, code=FailureCode.INTERNAL, message=_BROKE
                    )
                )
        finally:
            _LIVE.pop(self.turn_id, None)

    def _publish(self, envelope: Envelope) -> None:
        self.produced.append(envelope)
        if self.listener is not None:
            self.listener(envelope)

    def follow(self, *, owner: object, listener: Listener, last_seq: int) -> list[Envelope]:
        """Attach a socket; returns the backlog after `last_seq`. No await between taking the
        backlog and attaching, so no event can fall between them."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self.owner, self.listener = owner, listener
        return [e for e in self.produced if e["seq"] > last_seq]

    def orphan(self, grace_s: float) -> None:
        self.owner, self.listener = None, None
        self._expiry = asyncio.get_running_loop().call_later(grace_s, self._expire)

    def _expire(self) -> None:
        task = asyncio.create_task(self.stop())
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)

    async def stop(self) -> None:
        """Cancel and wait; then publish the terminal event `turn_run` stored but, being
        cancelled, could not yield (or store one if the turn never got to start)."""
        if self._expiry is not None:
            self._expiry.cancel()
        self.task.cancel()
        await asyncio.wait({self.task})
        _LIVE.pop(self.turn_id, None)  # _run never ran if the cancel came before it started
        if not self.ended:
            await turn_abandon(turn_id=self.turn_id)
            for envelope in await sync_to_async(turn_events_since)(
                turn_id=self.turn_id, last_seq=self.last_seq
            ):
                self._publish(envelope)


def live_answer(turn_id: int) -> LiveAnswer | None:
    return _LIVE.get(turn_id)


def refusal(code: FailureCode, message: str) -> dict[str, Any]:
    """A failed envelope for a message that started nothing (seq 0: it is not stored)."""
    return {
        "seq": 0,
        "turn": None,
        "type": str(EventType.FAILED),
        "data": failed_data(code, message),
    }


class ChatConsumer(AsyncJsonWebsocketConsumer):
    grace_s = RESUME_GRACE_S

    async def connect(self) -> None:
        self.answer: LiveAnswer | None = None
        self.replay: asyncio.Task[None] | None = None
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent_seq: dict[int, int] = {}
        self.sender: asyncio.Task[None] | None = None
        user = self.scope.get("user")
        # Accept first: a close before accept reaches a browser as a bare 403, without our code.
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user_id: int = user.pk
        self.session_key: str | None = getattr(self.scope.get("session"), "session_key", None)
        self.sender = asyncio.create_task(self._send_loop())

    async def disconnect(self, code: int) -> None:
        if self.sender is not None:
            self.sender.cancel()
        if self.replay is not None:
            self.replay.cancel()
        if self.answer is not None and self.answer.owner is self and not self.answer.task.done():
            self.answer.orphan(self.grace_s)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.sender is None:  # refused at connect; ignore whatever still arrives
            return
        if await sync_to_async(session_user_id)(session_key=self.session_key) != self.user_id:
            # Logged out (or deactivated) since connecting: the socket's login has ended.
            await self._stop_current()
            self.sender.cancel()
            self.sender = None
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            content = json.loads(text_data or "")
        except ValueError:
            self._post(refusal(FailureCode.INVALID_REQUEST, "Messages must be JSON objects"))
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        handlers = {"ask": self._ask, "cancel": self._cancel, "resume": self._resume}
        handler = handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            message = 'Unknown message; "type" must be one of ask, cancel, resume'
            self._post(refusal(FailureCode.INVALID_REQUEST, message))
            return
        try:
            await handler(content)
        except Exception:
            # A bug or a database hiccup must not close the socket the page relies on.
            logger.exception("Chat message %r failed", kind)
            self._post(refusal(FailureCode.INTERNAL, _BROKE))

    async def _ask(self, content: dict[str, Any]) -> None:
        try:
            opened = await turn_open(
                user_id=self.user_id,
                conversation_id=conversation_id_parse(content.get("conversation")),
                question=content.get("question"),  # type: ignore[arg-type]  # validated there
                collection_names=content.get("collections") or (),
            )
        except REFUSALS as exc:
            self._post(refusal(refusal_code(exc), str(exc)))
            return
        await self._stop_current()
        turn = opened.turn
        # Not a turn event (seq 0, not stored): tells the page which turn and conversation
        # this is before the first event, so it can cancel or resume at once.
        self._post(
            {
                "seq": 0,
                "turn": turn.pk,
                "type": "accepted",
                "data": {"conversation": str(turn.conversation_id), "question": turn.question},
            }
        )
        answer = LiveAnswer(
            turn_id=turn.pk, events=turn_events(turn_id=turn.pk, filters=opened.filters)
        )
        answer.follow(owner=self, listener=self._post, last_seq=0)
        self.answer = answer

    async def _cancel(self, content: dict[str, Any]) -> None:
        await self._stop_current()

    async def _resume(self, content: dict[str, Any]) -> None:
        turn_id, last_seq = _count(content.get("turn")), _count(content.get("last_seq", 0))
        if turn_id is None or last_seq is None:
            message = '"turn" and "last_seq" must be non-negative integers'
            self._post(refusal(FailureCode.INVALID_REQUEST, message))
            return
        try:
            await sync_to_async(turn_get)(turn_id=turn_id, user_id=self.user_id)
        except REFUSALS as exc:
            self._post(refusal(refusal_code(exc), str(exc)))
            return
        live = live_answer(turn_id)
        if live is not self.answer:
            await self._stop_current()
        self.sent_seq[turn_id] = last_seq  # the client's word for what it already has
        if live is not None and not live.task.done():
            self.answer = live
            for envelope in live.follow(owner=self, listener=self._post, last_seq=last_seq):
                self._post(envelope)
        else:
            self.replay = asyncio.create_task(self._follow_stored(turn_id, last_seq))

    async def _follow_stored(self, turn_id: int, last_seq: int) -> None:
        # Finished here, or still being answered by another process: the store has it all.
        async for envelope in turn_follow(turn_id=turn_id, user_id=self.user_id, last_seq=last_seq):
            self._post(envelope)

    async def _stop_current(self) -> None:
        if self.replay is not None:
            self.replay.cancel()
            self.replay = None
        answer, self.answer = self.answer, None
        if answer is not None and answer.owner is self:
            await answer.stop()

    def _post(self, envelope: Envelope | dict[str, Any]) -> None:
        """Queue for sending, at most once per (turn, seq): the highest seq sent is tracked."""
        turn, seq = envelope["turn"], envelope["seq"]
        if turn is not None and seq > 0:
            if seq <= self.sent_seq.get(turn, 0):
                return
            self.sent_seq[turn] = seq
        self.outbox.put_nowait(dict(envelope))

    async def _send_loop(self) -> None:
        while True:
            message = await self.outbox.get()
            await self.send_json(message)


def _count(value: object) -> int | None:
    """A non-negative JSON integer that fits the database's bigint, else None (JSON true is
    not 1 here)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    return None
