"""Reads of turns: one by id for its owner, its stored events, whether it still streams."""

from __future__ import annotations

from django.db.models import Q

from apps.answers.conversations.selectors import owned_one
from apps.answers.events import TERMINAL_EVENTS, Envelope
from apps.answers.models import Turn, TurnEvent


def turn_events_since(*, turn_id: int, last_seq: int = 0) -> list[Envelope]:
    """The events a client has not seen yet (seq > last_seq), in order."""
    events = TurnEvent.objects.filter(turn_id=turn_id, seq__gt=last_seq).order_by("seq")
    return [
        Envelope(seq=e.seq, turn=turn_id, type=e.type, data=e.data)
        for e in events.only("seq", "type", "data")
    ]


def turn_events_resumed(*, turn_id: int, last_seq: int) -> list[Envelope]:
    """What a follower from `last_seq` is sent from the store, in one query: the events after
    it, or, when there are none and the turn has ended, its terminal event again (a follower
    at or past the end must end, not wait for events that never come)."""
    stored = (
        TurnEvent.objects.filter(turn_id=turn_id)
        .filter(Q(seq__gt=last_seq) | Q(type__in=TERMINAL_EVENTS))
        .order_by("seq")
        .only("seq", "type", "data")
    )
    events = [Envelope(seq=e.seq, turn=turn_id, type=e.type, data=e.data) for e in stored]
    after = [e for e in events if e["seq"] > last_seq]
    return after or events


def turn_get(*, turn_id: int, user_id: int | None = None) -> Turn:
    """A turn by id; with `user_id`, only if that user's (else NotFound, never a hint)."""
    turns = Turn.objects.select_related("conversation").filter(pk=turn_id)
    if user_id is not None:
        turns = turns.filter(conversation__deleted_at__isnull=True)
    return owned_one(turns, owner="conversation__user_id", user_id=user_id, what="turn")
