"""Reads for conversations and turns."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from apps.answers.events import Envelope
from apps.answers.models import Conversation, Turn, TurnEvent
from apps.answers.routing.types import HistoryMessage
from apps.answers.routing.window import conversation_window


def turn_events_since(*, turn_id: int, last_seq: int = 0) -> list[Envelope]:
    """The events a client has not seen yet (seq > last_seq), in order."""
    events = TurnEvent.objects.filter(turn_id=turn_id, seq__gt=last_seq).order_by("seq")
    return [
        Envelope(seq=e.seq, turn=turn_id, type=e.type, data=e.data)
        for e in events.only("seq", "type", "data")
    ]


def conversation_history(*, conversation_id: UUID, before_index: int) -> tuple[HistoryMessage, ...]:
    """The window the router and composers see: last 6 messages, each cut to 600 characters."""
    turns = (
        Turn.objects.filter(conversation_id=conversation_id, index__lt=before_index)
        .order_by("-index")
        .only("question", "answer")[:3]
    )
    messages: list[HistoryMessage] = []
    for turn in reversed(list(turns)):
        messages.append(HistoryMessage(role="user", text=turn.question))
        if turn.answer:
            messages.append(HistoryMessage(role="assistant", text=turn.answer))
    return conversation_window(messages)


def conversations_for_user(*, user_id: int) -> QuerySet[Conversation]:
    return Conversation.objects.filter(user_id=user_id).order_by("-updated_at")


def turn_get(*, turn_id: int) -> Turn:
    return Turn.objects.select_related("conversation").get(pk=turn_id)
