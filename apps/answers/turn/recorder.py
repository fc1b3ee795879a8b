"""Numbering and storing a turn's events: every event gets the next sequence number and is
stored before anyone sees it, and a turn ends exactly once (`services.turn_end`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from django.db import IntegrityError

from apps.answers.events import TERMINAL_EVENTS, Envelope, EventType
from apps.answers.providers.usage import UsageMeter
from apps.answers.turn.outcomes import TurnFailed, TurnOutcome, TurnUsage
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import turn_end, turn_events_append, turn_usage_record
from apps.answers.turn.writer import turn_events_write
from ragplatform.db_threads import db_call
from ragplatform.errors import FailureCode


class TurnEndedElsewhere(Exception):
    """The turn was ended by someone else while this process still answered it: interrupted
    after its lease lapsed (the process stalled longer than RAG_TURN_LEASE_S). The stored end
    stands; `TurnRecorder.terminal` holds it."""


# An event not yet numbered: its type and data.
PendingEvent = tuple[EventType, dict[str, Any]]


class EventRecorder(Protocol):
    """What the compose stream needs: numbered envelopes for the events it produces."""

    async def emit(self, type_: EventType, data: dict[str, Any]) -> Envelope: ...

    async def emit_many(self, events: Sequence[PendingEvent]) -> list[Envelope]: ...


class TurnRecorder:
    """Numbers and persists every event of one turn; guarantees exactly one terminal event."""

    def __init__(self, turn_id: int, *, last_seq: int = 0) -> None:
        self.turn_id = turn_id
        self.seq = last_seq
        self.terminal: Envelope | None = None
        # The turn's model calls add their tokens here (see `providers.usage`).
        self.usage = UsageMeter()

    @classmethod
    async def resume(cls, turn_id: int) -> TurnRecorder:
        """A recorder that continues after the events already stored (and knows if they end)."""
        stored = await db_call(turn_events_since)(turn_id=turn_id, last_seq=0)
        recorder = cls(turn_id, last_seq=stored[-1]["seq"] if stored else 0)
        if stored and stored[-1]["type"] in TERMINAL_EVENTS:
            recorder.terminal = stored[-1]
        return recorder

    @property
    def terminated(self) -> bool:
        return self.terminal is not None

    async def emit(
        self, type_: EventType, data: dict[str, Any], *, along: Callable[[], object] | None = None
    ) -> Envelope:
        return (await self.emit_many([(type_, data)], along=along))[0]

    async def emit_many(
        self, events: Sequence[PendingEvent], *, along: Callable[[], object] | None = None
    ) -> list[Envelope]:
        """Number and store events that are ready together (the pieces of one flush) in one
        write: one statement stores and announces them all, in order. `along` is a write of
        the turn's columns that the events report (its classification), made just before
        them in the same database call; without it, the write may share its statement with
        other turns' (`writer`)."""
        envelopes = self._numbered(events)
        if envelopes:
            try:
                if along is None:
                    await turn_events_write(turn_id=self.turn_id, envelopes=envelopes)
                else:
                    await db_call(_stored)(turn_id=self.turn_id, envelopes=envelopes, along=along)
            except IntegrityError as refused:
                await self._ended_elsewhere(refused)
        return envelopes

    def _numbered(self, events: Sequence[PendingEvent]) -> list[Envelope]:
        envelopes = []
        for type_, data in events:
            if type_ in TERMINAL_EVENTS:
                raise ValueError(f"{type_} ends the turn: use end()")
            self._check_open(type_)
            self.seq += 1
            envelopes.append(Envelope(seq=self.seq, turn=self.turn_id, type=str(type_), data=data))
        return envelopes

    async def end(self, outcome: TurnOutcome) -> Envelope:
        return (await self.end_after(outcome, before=()))[-1]

    async def end_after(
        self, outcome: TurnOutcome, *, before: Sequence[PendingEvent]
    ) -> list[Envelope]:
        """End the turn after `before`, its last events, stored in the same write as its end
        (the follow-ups, which are ready only just before it); returns them and the end, or
        only the stored end if someone else ended the turn meanwhile."""
        self._check_open(EventType.FINISHED)
        last = self._numbered(before)
        self.seq += 1
        if self.usage.calls:
            usage = TurnUsage(
                self.usage.prompt_tokens, self.usage.completion_tokens, self.usage.source
            )
            await db_call(turn_usage_record)(turn_id=self.turn_id, usage=usage)
        try:
            self.terminal = await db_call(turn_end)(
                turn_id=self.turn_id, seq=self.seq, outcome=outcome, before=last
            )
        except IntegrityError as refused:
            # Ended meanwhile by someone else: the database refused a second end, and the
            # stored one stands (the end this process meant to store is dropped).
            with contextlib.suppress(TurnEndedElsewhere):
                await self._ended_elsewhere(refused)
            last = []
        assert self.terminal is not None
        return [*last, self.terminal]

    async def fail(self, code: FailureCode, message: str) -> Envelope:
        return await self.end(TurnFailed(code=code, message=message))

    async def _ended_elsewhere(self, refused: IntegrityError) -> None:
        """After the database refused an event's number: if the turn has a stored end (it was
        interrupted elsewhere after its lease lapsed), keep that end and raise
        TurnEndedElsewhere; anything else is a real error and propagates."""
        stored = await TurnRecorder.resume(self.turn_id)
        if stored.terminal is None:
            raise refused
        self.terminal = stored.terminal
        raise TurnEndedElsewhere(f"turn {self.turn_id} was ended elsewhere")

    def _check_open(self, type_: EventType) -> None:
        if self.terminal is not None:
            raise RuntimeError(f"turn {self.turn_id} already ended; cannot emit {type_}")


def _stored(*, turn_id: int, envelopes: list[Envelope], along: Callable[[], object] | None) -> None:
    if along is not None:
        along()
    turn_events_append(turn_id=turn_id, envelopes=envelopes)


class MemoryRecorder:
    """Numbers events without storing them: the evaluation commands run the same compose stream
    as a turn without writing turns."""

    def __init__(self) -> None:
        self.events: list[Envelope] = []

    async def emit(
        self, type_: EventType, data: dict[str, Any], *, along: Callable[[], object] | None = None
    ) -> Envelope:
        return (await self.emit_many([(type_, data)], along=along))[0]

    async def emit_many(
        self, events: Sequence[PendingEvent], *, along: Callable[[], object] | None = None
    ) -> list[Envelope]:
        envelopes = [
            Envelope(seq=len(self.events) + i, turn=0, type=str(type_), data=data)
            for i, (type_, data) in enumerate(events, start=1)
        ]
        self.events.extend(envelopes)
        return envelopes
