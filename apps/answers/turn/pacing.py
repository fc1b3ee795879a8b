"""A composer's events read with a deadline that does not cancel the composer.

The coalescer holds text until a boundary; only a timer can show held words while a slow
model is still writing the next ones. Waiting on the composer's generator with a timeout
would cancel it mid-call, so a task of its own reads the generator into a one-slot queue,
and the wait on that queue is what times out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from apps.answers.composing.types import ComposerEvent


class NothingYet:
    """No event by the deadline: the composer is still at work."""


NOTHING_YET = NothingYet()
_END = object()


class PacedEvents:
    def __init__(self, events: AsyncIterator[ComposerEvent]) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue(maxsize=1)
        self._reader = asyncio.create_task(self._read(events))

    async def next(self, *, timeout_at: float | None) -> ComposerEvent | NothingYet | None:
        """The next event, NOTHING_YET at `timeout_at` (loop time), None after the last one;
        the composer's own error is raised here."""
        try:
            async with asyncio.timeout_at(timeout_at):
                item = await self._queue.get()
        except TimeoutError:
            return NOTHING_YET
        if item is _END:
            return None
        if isinstance(item, BaseException):
            raise item
        return item  # type: ignore[return-value]  # only events, _END or errors are queued

    async def close(self) -> None:
        self._reader.cancel()
        await asyncio.wait({self._reader})

    async def _read(self, events: AsyncIterator[ComposerEvent]) -> None:
        try:
            async for event in events:
                await self._queue.put(event)
        except Exception as exc:  # handed to the reader of `next`, who decides
            await self._queue.put(exc)
            return
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        await self._queue.put(_END)


@contextlib.asynccontextmanager
async def composer_paced(events: AsyncIterator[ComposerEvent]) -> AsyncIterator[PacedEvents]:
    paced = PacedEvents(events)
    try:
        yield paced
    finally:
        await paced.close()
