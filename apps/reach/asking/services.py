"""Asking through another client's door: the chat page's own `turn_open` and pipeline, so the
same checks, rate limit, access rules and audit apply; nothing here decides an answer.

A client that sends the whole message list each time (every OpenAI chat front-end) continues
a stored conversation when the list's earlier questions are that conversation's questions, in
order; it may also name the conversation it continues.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from uuid import UUID

from apps.answers.conversations.selectors import conversations_for_user
from apps.answers.events import Envelope
from apps.answers.models import Turn, TurnClient
from apps.answers.turn.entry import OpenedTurn, turn_events, turn_follow, turn_launch, turn_open
from apps.reach.asking.replies import Reply, reply_read
from ragplatform.db_threads import db_call

# How many of the asker's recent conversations are compared with a message list's history.
_RECENT_CONVERSATIONS = 20


@dataclass(frozen=True)
class Question:
    """A question from another client: its text, what it continues and where it looks."""

    user_id: int
    text: object  # validated by turn_open, as every transport's question
    client: TurnClient  # the door it came through, for the audit
    collection_names: Sequence[str] = ()
    conversation_id: UUID | None = None
    earlier_questions: tuple[str, ...] = ()  # the client's history, oldest first
    client_agent: str = ""  # what the client says it is (User-Agent, MCP client name)


async def question_open(*, question: Question) -> OpenedTurn:
    """Open the question's turn; raises what `turn_open` raises (`turn/rejections.py`)."""
    conversation_id = question.conversation_id
    if conversation_id is None and question.earlier_questions:
        conversation_id = await db_call(conversation_continued)(
            user_id=question.user_id, questions=question.earlier_questions
        )
    return await turn_open(
        user_id=question.user_id,
        conversation_id=conversation_id,
        question=question.text,  # type: ignore[arg-type]  # validated there
        collection_names=question.collection_names,
        client=question.client,
        client_agent=question.client_agent,
    )


async def question_answer(*, question: Question, base_url: str) -> Reply:
    """Open the turn and run it to its end here; the stored reply. Raises what
    `question_open` raises."""
    opened = await question_open(question=question)
    async for _envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
        pass  # every event is stored as it happens; the reply is read back from the store
    return await db_call(reply_read)(turn_id=opened.turn.pk, base_url=base_url)


def question_stream(*, opened: OpenedTurn, user_id: int) -> AsyncIterator[Envelope]:
    """Run the opened turn detached from the request (a client that goes away cancels nothing)
    and follow it, as the chat's SSE does."""
    turn_launch(turn_id=opened.turn.pk, filters=opened.filters)
    return turn_follow(turn_id=opened.turn.pk, user_id=user_id, asker=opened.asker)


def conversation_continued(*, user_id: int, questions: Sequence[str]) -> UUID | None:
    """The user's most recent conversation whose questions are `questions` (in order), if any:
    what a client that resends the whole history continues."""
    wanted = [q.strip() for q in questions]
    recent = (
        conversations_for_user(user_id=user_id)
        .filter(turns__question=wanted[-1])
        .values_list("pk", flat=True)
    )
    for conversation_id in list(dict.fromkeys(recent))[:_RECENT_CONVERSATIONS]:
        asked = Turn.objects.filter(conversation_id=conversation_id).order_by("index")
        if [q.strip() for q in asked.values_list("question", flat=True)] == wanted:
            return conversation_id
    return None
