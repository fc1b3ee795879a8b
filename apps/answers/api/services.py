"""Writes behind the REST API: rename and delete a conversation, and ask a question without
streaming (the same `turn_open` and pipeline as the WebSocket and SSE)."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from django.db import transaction

from apps.answers.models import Conversation, TurnStatus
from apps.answers.services import conversation_title_set
from apps.answers.turn.entry import turn_events, turn_open


class ConversationBusy(Exception):
    """The conversation still has a turn being answered (answered 409)."""


def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    conversation_title_set(conversation_id=conversation.pk, title=title)
    conversation.title = title
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    """Delete a conversation with its turns, events and citations; refused while a turn is
    still streaming, whose pipeline would otherwise keep writing to rows that are gone."""
    with transaction.atomic():
        # The same lock `turn_start` takes, so no turn starts between the check and the delete.
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        if conversation.turns.filter(status=TurnStatus.STREAMING).exists():
            raise ConversationBusy("A question in this conversation is still being answered")
        Conversation.objects.filter(pk=conversation.pk).delete()


async def answer_ask(
    *,
    user_id: int,
    conversation_id: UUID | None,
    question: object,
    collection_names: Sequence[str],
) -> int:
    """Open a turn and run it to its terminal event; returns the turn's id.

    Raises what `turn_open` raises for a refused question (see `refusals.py`).
    """
    opened = await turn_open(
        user_id=user_id,
        conversation_id=conversation_id,
        question=question,  # type: ignore[arg-type]  # validated by turn_open
        collection_names=collection_names,
    )
    async for _envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
        pass  # every event is stored as it happens; the reply is read back from the store
    return opened.turn.pk
