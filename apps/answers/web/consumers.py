"""The chat WebSocket (/ws/chat/): gate each message, then forward a turn's typed events.

Client messages:
    {"type": "ask", "question": "...", "conversation": "<uuid>"?, "collections": ["name"]?}
    {"type": "cancel", "turn": <id>?}   (the turn followed on this socket when absent)
    {"type": "resume", "turn": <id>, "last_seq": <n>}   ("turn_id" is a deprecated alias)
    {"type": "pong"}   (an answer to the server's {"type": "ping"}; nothing happens)

An answer runs to its end whatever happens to the socket: the socket starts it detached and
then follows it as any other client does, so a dropped socket cancels nothing and the page
resumes on this process or any other. Only `cancel`, a new question in the same
conversation or the abandonment limit stop it. The socket follows one turn at a time; its
follow task never blocks `receive_json`, so a cancel is read while an answer streams. When
nothing has been sent for RAG_KEEPALIVE_S, the socket sends {"type": "ping"}.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from apps.answers.events import TERMINAL_EVENTS, Envelope, rejection
from apps.answers.models import TurnClient
from apps.answers.turn.entry import (
    AskerReadable,
    conversation_id_parse,
    turn_cancel,
    turn_follow,
    turn_launch,
    turn_open,
)
from apps.answers.turn.rejections import REJECTIONS, rejection_code
from apps.answers.turn.selectors import turn_get
from ragplatform.db_threads import db_call, db_threads_detached
from ragplatform.errors import FailureCode
from ragplatform.gates import user_signed_in
from ragplatform.input_hygiene import InvalidInput, json_parse
from ragplatform.session_check import (
    DATABASE_UNREACHABLE,
    DATABASE_UNREACHABLE_ERRORS,
    UNREACHABLE_MESSAGE,
    DatabaseUnreachable,
    session_user_id,
)

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
# The login could not be checked (the database is unreachable): the page retries, it does
# not go to the login page. 4000 + the HTTP status, like 4401.
CLOSE_UNAVAILABLE = 4503
_BROKE = "Something went wrong while answering; please try again."
_PING = {"type": "ping"}


class ChatConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.following: tuple[int, asyncio.Task[None]] | None = None
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent_seq: dict[int, int] = {}
        self.sender: asyncio.Task[None] | None = None
        user = self.scope.get("user")
        # Accept first: a close before accept reaches a browser as a bare 403, without our code.
        await self.accept()
        if self.scope.get(DATABASE_UNREACHABLE):
            await self._end(code=CLOSE_UNAVAILABLE)
            return
        if not user_signed_in(user):
            await self._end(code=CLOSE_UNAUTHENTICATED)
            return
        self.user_id: int = user.pk
        self.session_key: str | None = getattr(self.scope.get("session"), "session_key", None)
        self.sender = asyncio.create_task(self._send_loop())

    async def disconnect(self, code: int) -> None:
        # The answer goes on; only this socket's following of it ends.
        if self.sender is not None:
            self.sender.cancel()
        await self._unfollow()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.sender is None:  # refused at connect; ignore whatever still arrives
            return
        # Nothing of a socket's work belongs to a thread: its database calls (and those of the
        # answers it starts) use the database threads, not the process's one shared thread.
        with db_threads_detached():
            try:
                still = await db_call(session_user_id)(session_key=self.session_key)
            except DatabaseUnreachable:
                await self._end(code=CLOSE_UNAVAILABLE)
                return
            if still != self.user_id:
                # Logged out (or deactivated) since connecting: the socket's login has ended.
                await self._end(code=CLOSE_UNAUTHENTICATED)
                return
            try:
                content = json_parse(text_data or "", field="message")
            except InvalidInput as exc:  # too deep, or text the database cannot store
                self._post(rejection(FailureCode.INVALID_REQUEST, str(exc)))
                return
            except ValueError:
                self._post(rejection(FailureCode.INVALID_REQUEST, "Messages must be JSON objects"))
                return
            await self.receive_json(content)

    async def _end(self, *, code: int) -> None:
        """Stop following and sending, and close; an unavailable close is preceded by a typed
        `unavailable` event (the page answers that close by reconnecting)."""
        await self._unfollow()
        if self.sender is not None:
            self.sender.cancel()
            self.sender = None
        if code == CLOSE_UNAVAILABLE:
            await self.send_json(rejection(FailureCode.UNAVAILABLE, UNREACHABLE_MESSAGE))
        await self.close(code=code)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        handlers = {
            "ask": self._ask,
            "cancel": self._cancel,
            "resume": self._resume,
            "pong": self._pong,
        }
        handler = handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            message = 'Unknown message; "type" must be one of ask, cancel, resume, pong'
            self._post(rejection(FailureCode.INVALID_REQUEST, message))
            return
        try:
            await handler(content)
        except Exception:
            # A bug or a database hiccup must not close the socket the page relies on.
            logger.exception("Chat message %r failed", kind)
            self._post(rejection(FailureCode.INTERNAL, _BROKE))

    async def _ask(self, content: dict[str, Any]) -> None:
        try:
            opened = await turn_open(
                user_id=self.user_id,
                conversation_id=conversation_id_parse(content.get("conversation")),
                question=content.get("question"),  # type: ignore[arg-type]  # validated there
                collection_names=content.get("collections") or (),
                client=TurnClient.CHAT,
            )
        except REJECTIONS as exc:
            self._post(rejection(rejection_code(exc), str(exc)))
            return
        # An answer this question superseded (same conversation) is being cancelled: let its
        # `failed` reach the page before the new answer starts. Any other answer goes on
        # without this socket.
        superseded = self._followed() in opened.superseded
        await self._unfollow(drain_s=settings.RAG_TURN_LEASE_S if superseded else 0.0)
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
        turn_launch(turn_id=turn.pk, filters=opened.filters)
        self._follow(turn.pk, last_seq=0, asker=opened.asker)

    async def _cancel(self, content: dict[str, Any]) -> None:
        turn_id = _count(content["turn"]) if "turn" in content else self._followed()
        if turn_id is None:
            return  # nothing to cancel
        try:
            await db_call(turn_get)(turn_id=turn_id, user_id=self.user_id)
        except REJECTIONS as exc:
            self._post(rejection(rejection_code(exc), str(exc)))
            return
        await turn_cancel(turn_id=turn_id)
        if self._followed() != turn_id:  # show its end here, as for the followed one
            self._follow(turn_id, last_seq=self.sent_seq.get(turn_id, 0))

    async def _resume(self, content: dict[str, Any]) -> None:
        turn_id, last_seq = _count(_turn_field(content)), _count(content.get("last_seq", 0))
        if turn_id is None or last_seq is None:
            message = '"turn" and "last_seq" must be non-negative integers'
            self._post(rejection(FailureCode.INVALID_REQUEST, message))
            return
        try:
            await db_call(turn_get)(turn_id=turn_id, user_id=self.user_id)
        except REJECTIONS as exc:
            self._post(rejection(rejection_code(exc), str(exc)))
            return
        await self._unfollow()
        self.sent_seq[turn_id] = last_seq  # the client's word for what it already has
        self._follow(turn_id, last_seq=last_seq, resumed=True)

    async def _pong(self, content: dict[str, Any]) -> None:
        return None  # the client is alive; receiving it was the point

    def _follow(
        self,
        turn_id: int,
        *,
        last_seq: int,
        asker: AskerReadable | None = None,
        resumed: bool = False,
    ) -> None:
        forward = self._forward(turn_id, last_seq, asker, resumed=resumed)
        self.following = (turn_id, asyncio.create_task(forward))

    def _followed(self) -> int | None:
        if self.following is None or self.following[1].done():
            return None
        return self.following[0]

    async def _forward(
        self, turn_id: int, last_seq: int, asker: AskerReadable | None, *, resumed: bool
    ) -> None:
        try:
            async for envelope in turn_follow(
                turn_id=turn_id, user_id=self.user_id, last_seq=last_seq, asker=asker
            ):
                if resumed and envelope["type"] in TERMINAL_EVENTS:
                    # A resume from past the end gets the end again, though the client
                    # claimed its seq: it asked, and every follow ends with a terminal event.
                    self.sent_seq.pop(turn_id, None)
                self._post(envelope)
        except DATABASE_UNREACHABLE_ERRORS:
            # The answer's end cannot be read now; it will be, once the database is back: the
            # socket is closed as unavailable, and the page reconnects and resumes the turn.
            logger.warning("Following turn %s: the database is unreachable", turn_id)
            if self.following is not None and self.following[1] is asyncio.current_task():
                self.following = None  # ending here: nothing for _end to cancel
            await self._end(code=CLOSE_UNAVAILABLE)
        except Exception:
            logger.exception("Following turn %s broke off", turn_id)
            self._post(rejection(FailureCode.INTERNAL, _BROKE))

    async def _unfollow(self, *, drain_s: float = 0.0) -> None:
        """Stop following the current turn, after up to `drain_s` for it to end by itself."""
        following, self.following = self.following, None
        if following is None:
            return
        task = following[1]
        if drain_s and not task.done():
            await asyncio.wait({task}, timeout=drain_s)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

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
            try:
                async with asyncio.timeout(settings.RAG_KEEPALIVE_S):  # no task per message
                    message = await self.outbox.get()
            except TimeoutError:
                message = _PING  # idle: tell the client (and any proxy) the socket is alive
            await self.send_json(message)


_alias_warned = False


def _turn_field(content: dict[str, Any]) -> object:
    """A message's "turn"; an old client's "turn_id" still names it, with a warning (once per
    process: the log needs to know such clients exist, not how often they resume)."""
    global _alias_warned
    if "turn" in content or "turn_id" not in content:
        return content.get("turn")
    if not _alias_warned:
        _alias_warned = True
        logger.warning('A socket message named its turn "turn_id", deprecated: send "turn"')
    return content["turn_id"]


def _count(value: object) -> int | None:
    """A non-negative JSON integer that fits the database's bigint, else None (JSON true is
    not 1 here)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    return None
