"""Reads of turns: one by id for its owner, its stored events, whether it still streams."""

from __future__ import annotations

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


def turn_event_terminal(*, turn_id: int) -> Envelope | None:
    """The turn's stored terminal event (finished or failed), or None while it runs."""
    stored = TurnEvent.objects.filter(turn_id=turn_id, type__in=TERMINAL_EVENTS).first()
    if stored is None:
        return None
    return Envelope(seq=stored.seq, turn=turn_id, type=stored.type, data=stored.data)


def turn_get(*, turn_id: int, user_id: int | None = None) -> Turn:
    """A turn by id; with `user_id`, only if that user's (else NotFound, never a hint)."""
    turns = Turn.objects.select_related("conversation").filter(pk=turn_id)
    if user_id is not None:
        turns = turns.filter(conversation__deleted_at__isnull=True)
    return owned_one(turns, owner="conversation__user_id", user_id=user_id, what="turn")
