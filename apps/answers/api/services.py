"""Writes behind the REST API: rename and delete a conversation (the owner's delete, as on the
chat page: gone from their list, kept for the audit until the retention purges it), and ask a
question without streaming (the same `turn_open` and pipeline as the WebSocket and SSE)."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from apps.answers.conversations.services import (
    ConversationBusy,
    conversation_deleted_mark,
    conversation_title_set,
)
from apps.answers.models import Conversation, TurnClient
from apps.answers.turn.entry import turn_events, turn_open

__all__ = ["ConversationBusy", "answer_ask", "conversation_deleted_mark", "conversation_rename"]


def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    conversation_title_set(conversation_id=conversation.pk, title=title)
    conversation.title = title
    return conversation


async def answer_ask(
    *,
    user_id: int,
    conversation_id: UUID | None,
    question: object,
    collection_names: Sequence[str],
) -> int:
    """Open a turn and run it to its terminal event; returns the turn's id.

    Raises what `turn_open` raises for a rejected question (see `rejections.py`).
    """
    opened = await turn_open(
        user_id=user_id,
        conversation_id=conversation_id,
        question=question,  # type: ignore[arg-type]  # validated by turn_open
        collection_names=collection_names,
        client=TurnClient.API,
    )
    async for _envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
        pass  # every event is stored as it happens; the reply is read back from the store
    return opened.turn.pk
