"""One writer of events per process: the events that turns have ready in the same moment are
stored and announced in one statement (`services.turns_events_append`), instead of one
statement, one database call and one transaction per turn.

A turn hands its write over and waits until it is committed, as it would for its own
statement, so an event is still stored with its number before anyone hears of it; while one
statement is under way the writes that arrive meanwhile gather for the next. A number already
taken refuses a whole statement: then each turn's writes are made again on their own, so only
the turn whose number was taken is refused (with the IntegrityError it would have had alone).

Only detached turns share it (`db_threads_in_use`): a caller on its own thread, inside its own
transaction (a test, `async_to_sync`), writes on that thread as before.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError

from apps.answers.events import Envelope
from apps.answers.turn.services import turn_events_append, turns_events_append
from ragplatform.db_threads import db_call, db_threads_detached, db_threads_in_use

# A bound on one statement: its parameters stay a few hundred kilobytes.
_WRITES_PER_STATEMENT = 200


@dataclass
class _Write:
    turn_id: int
    envelopes: Sequence[Envelope]
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class _Writer:
    """The writes waiting on one event loop, and the task that stores them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: list[_Write] = []
        self.task: asyncio.Task[None] | None = None

    async def store(self, turn_id: int, envelopes: Sequence[Envelope]) -> None:
        write = _Write(turn_id, envelopes)
        self.waiting.append(write)
        if self.task is None or self.task.done():
            # A context of its own: the writes it makes belong to no one turn.
            self.task = self.loop.create_task(self._drain(), context=contextvars.Context())
        # Shielded: a turn cancelled meanwhile does not take its write out of the statement.
        await asyncio.shield(write.done)

    async def _drain(self) -> None:
        batch: list[_Write] = []
        try:
            with db_threads_detached():
                while self.waiting:
                    batch = self.waiting[:_WRITES_PER_STATEMENT]
                    del self.waiting[: len(batch)]
                    await _stored(batch)
        except BaseException:  # the loop is going away: nobody waits forever for a write
            for write in (*batch, *self.waiting):
                write.done.cancel()
            raise


async def _stored(batch: list[_Write]) -> None:
    try:
        await db_call(turns_events_append)(envelopes=[e for w in batch for e in w.envelopes])
    except IntegrityError:
        await _each_alone(batch)
    except Exception as failed:  # each waiting turn gets the error its own write would have had
        for write in batch:
            _settled(write, failed)
    else:
        for write in batch:
            _settled(write, None)


async def _each_alone(batch: list[_Write]) -> None:
    """After a refused statement: every turn's writes on their own, in their order, so only
    the turn whose number was taken is refused (and its later writes with it)."""
    refused: dict[int, Exception] = {}
    for write in batch:
        if write.turn_id in refused:
            _settled(write, refused[write.turn_id])
            continue
        try:
            await db_call(turn_events_append)(turn_id=write.turn_id, envelopes=write.envelopes)
        except Exception as failed:
            refused[write.turn_id] = failed
            _settled(write, failed)
        else:
            _settled(write, None)


def _settled(write: _Write, error: Exception | None) -> None:
    if write.done.done():
        return
    if error is None:
        write.done.set_result(None)
    else:
        write.done.set_exception(error)


_writer: _Writer | None = None


def _writer_here() -> _Writer:
    global _writer
    loop = asyncio.get_running_loop()
    if _writer is None or _writer.loop is not loop:
        _writer = _Writer(loop)
    return _writer


async def turn_events_write(*, turn_id: int, envelopes: Sequence[Envelope]) -> None:
    """Store and announce one write of a turn's events, returning once it is committed: with
    the writes of other turns ready in the same moment when the turn runs detached, alone on
    the caller's thread otherwise. Raises IntegrityError when a number is already taken."""
    if any(e["turn"] != turn_id for e in envelopes):
        raise ValueError(f"every event of one write belongs to turn {turn_id}")
    if not envelopes:
        return
    if db_threads_in_use():
        await _writer_here().store(turn_id, envelopes)
    else:
        await db_call(turn_events_append)(turn_id=turn_id, envelopes=envelopes)
