"""Live notices of turns, shared by every process through PostgreSQL LISTEN/NOTIFY.

Each process keeps one listening connection while anyone in it follows or answers a turn, and
hands every notice to the subscriptions of its turn; a process that no longer follows anything
closes it. When the connection drops, every subscription is told to re-read the store, since
notices sent meanwhile are lost; the store is always the truth, a notice only says "look now".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from enum import Enum
from typing import Any

import psycopg
from django.db import connections

from apps.answers.turn.notices import TURN_CHANNEL, Notice, notice_parse, notice_turn
from ragplatform.db_threads import db_call

logger = logging.getLogger(__name__)

# Connection parameters a listening connection may take from Django's (the rest, such as a
# cursor factory, describe Django's own use of its connection).
_CONNINFO_KEYS = frozenset(
    {
        "dbname",
        "user",
        "password",
        "host",
        "port",
        "service",
        "passfile",
        "sslmode",
        "sslrootcert",
        "sslcert",
        "sslkey",
        "options",
        "connect_timeout",
        "application_name",
        "target_session_attrs",
    }
)
_READY_WAIT_S = 2.0  # a subscriber waits this long for LISTEN; after that the store serves
_RECONNECT_S = 0.5


class Signal(Enum):
    RESYNC = "resync"  # notices may have been lost: read the store
    TIMEOUT = "timeout"  # nothing was heard for the time asked


class Subscription:
    """The notices of one turn, in the order PostgreSQL delivered them."""

    def __init__(self, turn_id: int, *, cancels_only: bool) -> None:
        self.turn_id = turn_id
        self.cancels_only = cancels_only
        self._queue: asyncio.Queue[Notice | Signal] = asyncio.Queue()

    def put(self, item: Notice | Signal) -> None:
        if isinstance(item, Notice) and self.cancels_only and not item.cancel:
            return
        self._queue.put_nowait(item)

    async def next(self, *, timeout: float) -> Notice | Signal:
        # A deadline on this task, not `wait_for`'s task and future around the queue's get:
        # this runs once per event per follower.
        try:
            async with asyncio.timeout(max(timeout, 0.0)):
                return await self._queue.get()
        except TimeoutError:
            return Signal.TIMEOUT


class _Hub:
    """One listening connection for the subscriptions of one event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.subscriptions: dict[int, set[Subscription]] = {}
        self.listening = asyncio.Event()
        self.reader: asyncio.Task[None] | None = None

    def add(self, subscription: Subscription) -> None:
        self.subscriptions.setdefault(subscription.turn_id, set()).add(subscription)
        if self.reader is None or self.reader.done():
            self.listening = asyncio.Event()
            self.reader = asyncio.create_task(self._read())

    def remove(self, subscription: Subscription) -> None:
        subscribers = self.subscriptions.get(subscription.turn_id, set())
        subscribers.discard(subscription)
        if not subscribers:
            self.subscriptions.pop(subscription.turn_id, None)
        if not self.subscriptions and self.reader is not None:
            self.reader.cancel()  # nobody here follows anything: give the connection back
            self.reader = None

    async def _read(self) -> None:
        params = await db_call(_conninfo)()
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(**params, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {TURN_CHANNEL}")
                    self.listening.set()
                    async for notify in conn.notifies():
                        # Every process hears every turn's notices: only those of a turn
                        # followed here are parsed.
                        if notice_turn(notify.payload) in self.subscriptions:
                            self._dispatch(notice_parse(notify.payload))
            except (psycopg.Error, OSError):
                logger.warning("Lost the turn notice connection; reconnecting", exc_info=True)
            self.listening.set()  # waiting subscribers go on with the store
            self._broadcast(Signal.RESYNC)
            await asyncio.sleep(_RECONNECT_S)

    def _dispatch(self, notice: Notice | None) -> None:
        if notice is None:
            return
        for subscription in tuple(self.subscriptions.get(notice.turn, ())):
            subscription.put(notice)

    def _broadcast(self, signal: Signal) -> None:
        for subscribers in tuple(self.subscriptions.values()):
            for subscription in tuple(subscribers):
                subscription.put(signal)


_hub: _Hub | None = None


def _hub_here() -> _Hub:
    global _hub
    loop = asyncio.get_running_loop()
    if _hub is None or _hub.loop is not loop:
        _hub = _Hub(loop)
    return _hub


def _conninfo() -> dict[str, Any]:
    params = connections["default"].get_connection_params()
    return {key: value for key, value in params.items() if key in _CONNINFO_KEYS and value}


@contextlib.asynccontextmanager
async def turn_notices(turn_id: int, *, cancels_only: bool = False) -> AsyncIterator[Subscription]:
    """Subscribe to a turn's notices; once this is entered, LISTEN is active (or has failed),
    so anything committed afterwards is heard: read the store only after entering."""
    hub = _hub_here()
    subscription = Subscription(turn_id, cancels_only=cancels_only)
    hub.add(subscription)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hub.listening.wait(), timeout=_READY_WAIT_S)
        yield subscription
    finally:
        hub.remove(subscription)


async def with_keepalive(
    events: AsyncIterator[Any], *, every_s: float
) -> AsyncIterator[Any | None]:
    """`events`, with None whenever nothing came for `every_s` (the transport sends a ping)."""
    step: asyncio.Future[Any] | None = None
    try:
        while True:
            if step is None:
                step = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({step}, timeout=every_s)
            if not done:
                yield None
                continue
            finished, step = step, None
            try:
                item = finished.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        if step is not None and not step.done():
            step.cancel()
            await asyncio.wait({step})
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
