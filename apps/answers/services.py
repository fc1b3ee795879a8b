"""Writes for conversations and turns: start a turn, append its events, finish or fail it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from apps.answers.events import Envelope, EventType, FailureCode, failed_data
from apps.answers.models import Citation, Conversation, Turn, TurnEvent, TurnStatus
from apps.answers.signals import turn_ended

logger = logging.getLogger(__name__)


class InvalidQuestion(ValueError):
    """The question cannot be asked (empty, too long): answered with a 4xx / a failed event."""


@dataclass(frozen=True)
class CitationRecord:
    alias: str
    chunk_id: int | None
    document_id: int | None
    title: str
    source_file: str
    page: int | None
    snippet: str
    position: int | None
    kind: str = "cited"


def question_clean(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidQuestion("The question must be text")
    question = text.replace("\x00", "").strip()
    if not question:
        raise InvalidQuestion("The question is empty")
    limit = settings.RAG_MAX_QUESTION_CHARS
    if len(question) > limit:
        raise InvalidQuestion(
            f"The question is {len(question):,} characters; the limit is {limit:,}"
        )
    return question


def conversation_start(*, user_id: int | None) -> Conversation:
    return Conversation.objects.create(user_id=user_id)


def turn_start(*, conversation: Conversation, question: str) -> Turn:
    """Persist the turn (status streaming) before any work, so nothing is lost if we die."""
    cleaned = question_clean(question)
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        last = conversation.turns.aggregate(last=Max("index"))["last"]
        turn = Turn.objects.create(
            conversation=conversation, index=(last or 0) + 1, question=cleaned
        )
        Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    return turn


class TurnRecorder:
    """Numbers and persists every event of one turn; guarantees exactly one terminal event."""

    def __init__(self, turn_id: int) -> None:
        self.turn_id = turn_id
        self.seq = 0
        self.terminated = False

    async def emit(self, type_: EventType, data: dict[str, Any]) -> Envelope:
        if self.terminated:
            raise RuntimeError(f"turn {self.turn_id} already ended; cannot emit {type_}")
        self.seq += 1
        envelope = Envelope(seq=self.seq, turn=self.turn_id, type=str(type_), data=data)
        await sync_to_async(_event_store)(envelope)
        if type_ in (EventType.FINISHED, EventType.FAILED):
            self.terminated = True
            await sync_to_async(_turn_ended)(self.turn_id)
        return envelope

    async def fail(self, code: FailureCode, message: str, **fields: Any) -> Envelope:
        await sync_to_async(turn_update)(
            turn_id=self.turn_id,
            status=TurnStatus.CANCELLED if code == FailureCode.CANCELLED else TurnStatus.FAILED,
            error_code=str(code),
            error_message=message,
            finished_at=timezone.now(),
            **fields,
        )
        return await self.emit(EventType.FAILED, failed_data(code, message))


def _turn_ended(turn_id: int) -> None:
    # Best effort, like the post-turn step: a failing receiver never touches the stored turn.
    for receiver, response in turn_ended.send_robust(sender=None, turn_id=turn_id):
        if isinstance(response, Exception):
            logger.error("Turn-end step %s failed for turn %s: %r", receiver, turn_id, response)


def _event_store(envelope: Envelope) -> None:
    TurnEvent.objects.create(
        turn_id=envelope["turn"], seq=envelope["seq"], type=envelope["type"], data=envelope["data"]
    )


def turn_update(*, turn_id: int, **fields: Any) -> None:
    Turn.objects.filter(pk=turn_id).update(**fields)


def citations_store(*, turn_id: int, citations: Sequence[CitationRecord]) -> None:
    Citation.objects.bulk_create(
        [
            Citation(
                turn_id=turn_id,
                alias=c.alias,
                kind=c.kind,
                chunk_id=c.chunk_id,
                document_id=c.document_id,
                title=c.title[:500],
                source_file=c.source_file[:700],
                page=c.page,
                snippet=c.snippet,
                position=c.position,
            )
            for c in citations
        ],
        ignore_conflicts=True,
    )


def conversation_title_set(*, conversation_id: UUID, title: str) -> None:
    Conversation.objects.filter(pk=conversation_id).update(title=title[:200])
