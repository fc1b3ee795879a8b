"""Reads of turns: one by id for its owner, its stored events, whether it still streams."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Q, QuerySet

from apps.answers.conversations.selectors import NotFound, owned_one
from apps.answers.events import TERMINAL_EVENTS, Envelope
from apps.answers.models import Turn, TurnEvent


def turn_events_since(*, turn_id: int, last_seq: int = 0) -> list[Envelope]:
    """The events a client has not seen yet (seq > last_seq), in order."""
    events = TurnEvent.objects.filter(turn_id=turn_id, seq__gt=last_seq).order_by("seq")
    return _envelopes(turn_id, events)


def turn_events_resumed(*, turn_id: int, last_seq: int) -> list[Envelope]:
    """What a follower from `last_seq` is sent from the store, in one query: the events after
    it, or, when there are none and the turn has ended, its terminal event again (a follower
    at or past the end must end, not wait for events that never come)."""
    stored = (
        TurnEvent.objects.filter(turn_id=turn_id)
        .filter(Q(seq__gt=last_seq) | Q(type__in=TERMINAL_EVENTS))
        .order_by("seq")
    )
    events = _envelopes(turn_id, stored)
    after = [e for e in events if e["seq"] > last_seq]
    return after or events


def _envelopes(turn_id: int, events: QuerySet[TurnEvent]) -> list[Envelope]:
    # Columns, not model instances: a follower reads these on every resume and every gap.
    rows = events.values_list("seq", "type", "data")
    return [Envelope(seq=seq, turn=turn_id, type=type_, data=data) for seq, type_, data in rows]


@dataclass(frozen=True)
class TurnAsked:
    """What the process about to answer a turn reads of it."""

    question: str
    conversation_id: UUID
    index: int


def turn_asked_get(*, turn_id: int) -> TurnAsked:
    """The turn's question and its place in its conversation: three columns, not the row and
    its conversation (NotFound if it is gone)."""
    found = Turn.objects.filter(pk=turn_id).values_list("question", "conversation_id", "index")
    row = found.first()
    if row is None:
        raise NotFound("No such turn")
    return TurnAsked(*row)


def turn_get(*, turn_id: int, user_id: int | None = None) -> Turn:
    """A turn by id; with `user_id`, only if that user's (else NotFound, never a hint)."""
    turns = Turn.objects.select_related("conversation").filter(pk=turn_id)
    if user_id is not None:
        turns = turns.filter(conversation__deleted_at__isnull=True)
    return owned_one(turns, owner="conversation__user_id", user_id=user_id, what="turn")
