"""Reads for conversations and turns."""

from __future__ import annotations

from typing import TypeVar
from uuid import UUID

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db.models import Model, QuerySet

from apps.answers.events import Envelope
from apps.answers.models import Conversation, Turn, TurnEvent, TurnStatus
from apps.answers.routing.types import HistoryMessage
from apps.answers.routing.window import conversation_window
from apps.corpus.access import collection_ids_readable


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


_M = TypeVar("_M", bound=Model)


class NotFound(LookupError):
    """The conversation or turn does not exist or belongs to someone else (answered 404)."""


def turn_get(*, turn_id: int, user_id: int | None = None) -> Turn:
    """A turn by id; with `user_id`, only if that user's (else NotFound, never a hint)."""
    turns = Turn.objects.select_related("conversation").filter(pk=turn_id)
    return _owned_one(turns, owner="conversation__user_id", user_id=user_id, what="turn")


def conversation_get(*, conversation_id: UUID, user_id: int | None) -> Conversation:
    """A conversation by id; with `user_id`, only if that user's. None is the operator (the
    command line), who may continue any conversation."""
    conversations = Conversation.objects.filter(pk=conversation_id)
    return _owned_one(conversations, owner="user_id", user_id=user_id, what="conversation")


def _owned_one(rows: QuerySet[_M], *, owner: str, user_id: int | None, what: str) -> _M:
    if user_id is not None:
        rows = rows.filter(**{owner: user_id})
    found = rows.first()
    if found is None:
        raise NotFound(f"No such {what}")
    return found


def turn_is_streaming(*, turn_id: int) -> bool:
    return Turn.objects.filter(pk=turn_id, status=TurnStatus.STREAMING).exists()


def user_collection_ids_readable(*, user_id: int | None) -> frozenset[int] | None:
    """The collections a user may read (None: all). `user_id` None is the operator at the
    command line; a user deleted since signing in reads nothing, like an anonymous one."""
    if user_id is None:
        return None
    user = get_user_model().objects.filter(pk=user_id).first()
    return collection_ids_readable(user=user or AnonymousUser())
