"""Writes for turns: every column a turn sets is written by a named function here, from the
typed outcome of one stage (`outcomes.py`)."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, JSONField, Max, Value
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Now
from django.utils import timezone

from apps.answers.events import Envelope, EventType, failed_data
from apps.answers.models import (
    Citation,
    CitationKind,
    Conversation,
    Turn,
    TurnClient,
    TurnEvent,
    TurnStatus,
)
from apps.answers.turn.end_steps import TurnEnd, turn_end_steps_run
from apps.answers.turn.notices import TURN_CHANNEL, event_encode
from apps.answers.turn.outcomes import (
    TurnClassified,
    TurnFailed,
    TurnFinished,
    TurnOutcome,
    TurnRetrieved,
    TurnUsage,
)
from ragplatform.errors import FailureCode
from ragplatform.leases import lease_expiry


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
    kind: CitationKind = CitationKind.CITED


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


FIRST_TURN_INDEX = 1


def turn_start(
    *,
    conversation: Conversation,
    question: str,
    readable_collections: Collection[int] | None = None,
    client: TurnClient = TurnClient.UNKNOWN,
    client_agent: str = "",
) -> Turn:
    """Persist the turn (status streaming) before any work, so nothing is lost if we die.
    `readable_collections` is what it may read (None: all) and `client` the door it came
    through (`client_agent` what that client says it is), kept for the audit."""
    cleaned = question_clean(question)
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        last = conversation.turns.aggregate(last=Max("index"))["last"]
        turn = Turn.objects.create(
            conversation=conversation,
            index=FIRST_TURN_INDEX if last is None else last + 1,
            question=cleaned,
            readable_collections=_sorted_or_all(readable_collections),
            **_client_fields(client, client_agent),
            **_lease_initial(),
        )
        Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    return turn


def conversation_with_turn_start(
    *,
    user_id: int | None,
    question: str,
    readable_collections: Collection[int] | None,
    client: TurnClient = TurnClient.UNKNOWN,
    client_agent: str = "",
) -> Turn:
    """A new conversation and its first turn, together: nothing to lock or count yet, so two
    statements where asking in an existing conversation takes several."""
    cleaned = question_clean(question)
    with transaction.atomic():
        conversation = Conversation.objects.create(user_id=user_id)
        return Turn.objects.create(
            conversation=conversation,
            index=FIRST_TURN_INDEX,
            question=cleaned,
            readable_collections=_sorted_or_all(readable_collections),
            **_client_fields(client, client_agent),
            **_lease_initial(),
        )


def _sorted_or_all(collection_ids: Collection[int] | None) -> list[int] | None:
    return None if collection_ids is None else sorted(collection_ids)


def _client_fields(client: TurnClient, agent: str) -> dict[str, Any]:
    # The agent is whatever the client sent: cut to the column rather than refuse the question.
    limit = Turn._meta.get_field("client_agent").max_length or 0
    return {"client": client, "client_agent": agent.replace("\x00", "")[:limit]}


def _lease_initial() -> dict[str, Any]:
    """A new turn's lease and follow time, on the database's clock like every renewal
    (`leases.turn_lease_renew`): a turn that no process ever picks up still lapses."""
    return {
        "lease_expires_at": lease_expiry(seconds=settings.RAG_TURN_LEASE_S),
        "followed_at": Now(),
    }


def turn_classified_record(*, turn_id: int, classified: TurnClassified) -> None:
    Turn.objects.filter(pk=turn_id).update(
        intent=classified.intent,
        router_confidence=classified.router_confidence,
        tier=classified.tier,
        strategy=classified.strategy,
        action=classified.action,
        language=classified.language,
        classification=classified.classification,
    )


def turn_retrieval_record(
    *, turn_id: int, retrieved: TurnRetrieved, context: dict[str, Any] | None = None
) -> None:
    """What retrieval found and, for an answer, the context window the composer saw (aliases
    -> chunk ids, budget and utilisation), in one statement."""
    columns = {"retrieval_trace": retrieved.retrieval_trace, "models_used": retrieved.models_used}
    if context is not None:
        columns["context"] = context
    Turn.objects.filter(pk=turn_id).update(**columns)


# The events of one write, stored in one statement and then announced in their order: the
# rows come as one JSON array, the notices as one text, a line each (compact JSON has no line
# breaks). Two plain text parameters: psycopg quotes an array's every element in Python, which
# cost thirty times as much as the statement's other work on the client.
_APPEND = f"""
    WITH stored AS (
        INSERT INTO {TurnEvent._meta.db_table} (turn_id, seq, type, data, created_at)
        SELECT e.turn, e.seq, e.type, e.data, statement_timestamp()
        FROM jsonb_to_recordset(%s::jsonb) AS e (turn integer, seq integer, type text, data jsonb)
        RETURNING seq
    )
    SELECT pg_notify(%s, n.notice)
    FROM string_to_table(%s, E'\\n') WITH ORDINALITY AS n (notice, i)
    WHERE EXISTS (SELECT FROM stored)
    ORDER BY n.i
"""  # noqa: S608 - the table name is our own model's, the values are parameters


def turn_events_append(*, turn_id: int, envelopes: Sequence[Envelope]) -> None:
    """Store the events of one write and announce them to every process in one statement:
    followers hear of them exactly when they are committed (inside `turn_end`'s transaction,
    with the turn's end), in order. Each event's data is encoded once, for its row and its
    notice. A number already taken refuses the whole write (IntegrityError)."""
    if any(e["turn"] != turn_id for e in envelopes):
        raise ValueError(f"every event of one write belongs to turn {turn_id}")
    turns_events_append(envelopes=envelopes)


def turns_events_append(*, envelopes: Sequence[Envelope]) -> None:
    """`turn_events_append` for the events of several turns at once (`turn.writer`): one
    statement, each turn's events announced in their order. A number already taken by any
    of them refuses them all."""
    if not envelopes:
        return
    encoded = [event_encode(e) for e in envelopes]
    rows = ",".join(
        f'{{"turn":{int(e["turn"])},"seq":{int(e["seq"])},"type":{json.dumps(e["type"])},'
        f'"data":{c.data}}}'
        for e, c in zip(envelopes, encoded, strict=True)
    )
    with connection.cursor() as cursor:
        cursor.execute(_APPEND, [f"[{rows}]", TURN_CHANNEL, "\n".join(c.notice for c in encoded)])


def turn_usage_record(*, turn_id: int, usage: TurnUsage) -> None:
    """The tokens the turn's model calls spent; `models_used.token_usage` says how they were
    counted (merged into the models retrieval recorded, not replacing them)."""
    counted = Value({"token_usage": usage.source}, output_field=JSONField())
    Turn.objects.filter(pk=turn_id).update(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        models_used=CombinedExpression(F("models_used"), "||", counted, output_field=JSONField()),
    )


def turn_end(
    *, turn_id: int, seq: int, outcome: TurnOutcome, before: Sequence[Envelope] = ()
) -> Envelope:
    """The one place a turn ends: its final columns and its terminal event are stored together,
    then the registered turn-end steps run once the transaction commits. `before` are the
    turn's last events (numbered before `seq`), stored in the same statement as its end."""
    with transaction.atomic():
        if isinstance(outcome, TurnFailed):
            # What a failed turn keeps is read from the store: its last events first.
            turn_events_append(turn_id=turn_id, envelopes=before)
            before = ()
            outcome = _failed_keeping_what_was_sent(turn_id, outcome)
        status, columns, envelope = _ending(turn_id, seq, outcome)
        Turn.objects.filter(pk=turn_id).update(status=status, finished_at=timezone.now(), **columns)
        turn_events_append(turn_id=turn_id, envelopes=[*before, envelope])
        transaction.on_commit(lambda: turn_end_steps_run(TurnEnd(turn_id, status)))
    return envelope


def _failed_keeping_what_was_sent(turn_id: int, outcome: TurnFailed) -> TurnFailed:
    """A turn that ends early (cancelled, abandoned, interrupted, broken) keeps everything its
    followers were sent: the streamed text and the citations, marked partial, whichever path
    ended it and whatever that path still knew."""
    events = TurnEvent.objects.filter(
        turn_id=turn_id, type__in=(EventType.TOKEN, EventType.CITATION)
    ).order_by("seq")
    sent = list(events.values_list("type", "data"))
    text = "".join(data.get("text", "") for type_, data in sent if type_ == EventType.TOKEN)
    citations_store(
        turn_id=turn_id,
        citations=[citation_sent(data) for type_, data in sent if type_ == EventType.CITATION],
    )
    answer = outcome.answer or text
    return replace(outcome, answer=answer, partial=outcome.partial or bool(answer.strip()))


def citation_sent(data: dict[str, Any]) -> CitationRecord:
    """The citation a `citation` event showed, as the record stored with the turn."""
    return CitationRecord(
        alias=str(data.get("alias", "")),
        chunk_id=data.get("chunk"),
        document_id=data.get("document"),
        title=str(data.get("title", "")),
        source_file=str(data.get("source_file", "")),
        page=data.get("page"),
        snippet=str(data.get("snippet", "")),
        position=None,
        kind=CitationKind(data.get("kind", CitationKind.CITED)),
    )


def _ending(
    turn_id: int, seq: int, outcome: TurnOutcome
) -> tuple[TurnStatus, dict[str, Any], Envelope]:
    if isinstance(outcome, TurnFinished):
        columns: dict[str, Any] = {
            "answer": outcome.answer,
            "action": outcome.action,
            "composer": outcome.composer,
            "confidence": outcome.confidence,
            "confidence_band": outcome.confidence_band or "",
            "refused": outcome.refused,
            "refusal_reason": outcome.refusal_reason[:300],
            "followups": list(outcome.followups),
            "fallback_reason": outcome.fallback_reason,
            "dropped_citations": list(outcome.dropped_citations),
            "unsupported_sentences": outcome.unsupported_sentences,
            "confidence_inputs": outcome.confidence_inputs,
            "timings_ms": outcome.timings_ms,
        }
        finished = Envelope(
            seq=seq, turn=turn_id, type=str(EventType.FINISHED), data=outcome.event_data()
        )
        return TurnStatus.FINISHED, columns, finished
    columns = {
        "error_code": str(outcome.code),
        "error_message": outcome.message,
        "answer": outcome.answer,
        "partial": outcome.partial,
        "composer": outcome.composer,
        "timings_ms": outcome.timings_ms,
    }
    cancelled = outcome.code == FailureCode.CANCELLED
    data = failed_data(outcome.code, outcome.message)
    failed = Envelope(seq=seq, turn=turn_id, type=str(EventType.FAILED), data=data)
    return TurnStatus.CANCELLED if cancelled else TurnStatus.FAILED, columns, failed


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
