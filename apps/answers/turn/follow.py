"""Following a turn from any process: the stored events after `last_seq`, then the live tail
from LISTEN/NOTIFY, each event once, through its terminal event.

Subscribe first, then read the store, then take notices, skipping every seq already passed:
nothing committed after the subscription can be missed and nothing is sent twice. A notice
that skips a seq, carries no event (too large) or follows a lost connection sends the
follower back to the store. A follower past the end of a turn that has ended (a `last_seq`
at or beyond its terminal event) gets that terminal event again and ends at once. A follower
that hears nothing for RAG_TURN_FOLLOW_CHECK_S checks the turn's lease itself, and ends a
turn whose process is gone, so it always gets a terminal event.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from django.conf import settings

from apps.answers.events import TERMINAL_EVENTS, Envelope
from apps.answers.models import Turn
from apps.answers.turn.leases import turn_follow_check, turn_followed
from apps.answers.turn.live import Signal, Subscription, turn_notices
from apps.answers.turn.notices import Notice
from apps.answers.turn.replay import readable_lost, turn_events_visible
from apps.answers.turn.selectors import turn_events_resumed
from apps.corpus.access import user_collection_ids_readable
from ragplatform.db_threads import db_call, db_threads_detached


@dataclass(frozen=True)
class AskerReadable:
    """What the asker may read, decided by `turn_open` moments ago and recorded as what the
    turn could read: their own follow starts from it instead of deciding it again, and need
    not note the turn followed (it was, when stored)."""

    ids: frozenset[int] | None


class _Follower:
    """What one follower has passed (`last_seq`, withheld events included) and whether live
    events need the reader's visibility filter (only if they lost access since asking)."""

    def __init__(
        self, *, turn_id: int, user_id: int | None, last_seq: int, asker: AskerReadable | None
    ) -> None:
        self.turn_id = turn_id
        self.user_id = user_id
        self.last_seq = last_seq
        self.asker = asker
        self.readable: frozenset[int] | None = None
        self.filter_live = False
        self.noted_at = time.monotonic()

    def open(self) -> list[Envelope]:
        if self.asker is not None:
            self.readable = self.asker.ids  # the turn's own readable set: nothing to filter
            return self.stored()
        readable = user_collection_ids_readable(user_id=self.user_id)
        if readable is not None:
            asked = Turn.objects.filter(pk=self.turn_id).values_list(
                "readable_collections", flat=True
            )
            self.readable = readable_lost(readable=readable, could_read=asked.first())
            self.filter_live = self.readable is not None
        turn_follow_check(turn_id=self.turn_id)
        return self.stored()

    def stored(self) -> list[Envelope]:
        events = turn_events_resumed(turn_id=self.turn_id, last_seq=self.last_seq)
        return self._passed(events)

    def _passed(self, events: list[Envelope]) -> list[Envelope]:
        if not events:
            return []
        self.last_seq = events[-1]["seq"]
        return turn_events_visible(turn_id=self.turn_id, events=events, readable=self.readable)

    def live(self, envelope: Envelope) -> list[Envelope]:
        if not self.filter_live:
            self.last_seq = envelope["seq"]
            return [envelope]
        return self._passed([envelope])

    def check(self) -> list[Envelope]:
        self.noted_at = time.monotonic()
        turn_follow_check(turn_id=self.turn_id)
        return self.stored()

    def note(self) -> None:
        self.noted_at = time.monotonic()
        turn_followed(turn_id=self.turn_id)

    def noted_long_ago(self) -> bool:
        # Now and then, not per event: enough to show the turn is not abandoned.
        return time.monotonic() - self.noted_at > settings.RAG_TURN_ABANDON_S / 4


async def turn_follow(
    *, turn_id: int, user_id: int | None, last_seq: int = 0, asker: AskerReadable | None = None
) -> AsyncIterator[Envelope]:
    """The events of `turn_id` after `last_seq`, without what `user_id` may no longer read,
    through the terminal event, wherever the turn is being answered. `asker` is given by the
    transport that has just opened the turn for `user_id`."""
    follower = _Follower(turn_id=turn_id, user_id=user_id, last_seq=last_seq, asker=asker)
    async with turn_notices(turn_id) as notices:
        # A follower may follow for minutes, from a request's task too: its reads go to the
        # database threads, each giving its connection back, rather than keep a request's
        # thread (and a connection) while the answer streams. Never across a `yield`: the
        # context is the caller's.
        with db_threads_detached():
            events = await db_call(follower.open)()
        while True:
            for envelope in events:
                yield envelope
                if envelope["type"] in TERMINAL_EVENTS:
                    return
            with db_threads_detached():
                events = await _next_events(follower, notices)


async def _next_events(follower: _Follower, notices: Subscription) -> list[Envelope]:
    heard = await notices.next(timeout=settings.RAG_TURN_FOLLOW_CHECK_S)
    if heard is Signal.TIMEOUT:
        return await db_call(follower.check)()
    if follower.noted_long_ago():
        await db_call(follower.note)()
    if isinstance(heard, Notice) and heard.seq <= follower.last_seq:
        return []  # already passed (or not an event: a cancel request)
    if not isinstance(heard, Notice) or heard.envelope is None or heard.seq > follower.last_seq + 1:
        return await db_call(follower.stored)()  # lost notices, a gap, or too large
    if follower.filter_live:
        return await db_call(follower.live)(heard.envelope)
    return follower.live(heard.envelope)
