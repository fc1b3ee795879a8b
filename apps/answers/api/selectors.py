"""Reads behind the REST API, always scoped to the signed-in owner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from django.db.models import Case, Count, F, IntegerField, Prefetch, QuerySet, Value, When

from apps.answers.conversations.selectors import conversations_for_user
from apps.answers.events import EventType
from apps.answers.models import Citation, CitationKind, Conversation, Turn, TurnEvent
from apps.answers.turn.timings import stage_timings


def conversations_listed(*, user_id: int) -> QuerySet[Conversation]:
    """The user's conversations, newest activity first, with how many turns each has."""
    conversations = conversations_for_user(user_id=user_id).annotate(turn_count=Count("turns"))
    return conversations.order_by("-updated_at", "-pk")  # a total order, so pages never overlap


def citations_listed() -> QuerySet[Citation]:
    """Citations in reading order (cited first, by their place in the answer), with the chunk's
    index and the document's domain joined in; both are null once the chunk or document is
    gone, while the copied title, file, page and snippet stay."""
    cited_first = Case(
        When(kind=CitationKind.CITED, then=Value(0)), default=Value(1), output_field=IntegerField()
    )
    return Citation.objects.annotate(
        chunk_index=F("chunk__index"), domain=F("document__domain"), kind_order=cited_first
    ).order_by("kind_order", F("position").asc(nulls_last=True), "alias")


# The stored events a turn's columns repeat (its clarifying question, its follow-ups): the
# replay filter reads them to withhold what the reader may no longer read.
REPLAY_EVENTS = (EventType.CLARIFICATION, EventType.FOLLOWUPS)


def _turn_parts() -> tuple[Prefetch[str], Prefetch[str]]:
    events = TurnEvent.objects.filter(type__in=REPLAY_EVENTS).order_by("seq")
    return (
        Prefetch("citations", queryset=citations_listed()),
        Prefetch("events", queryset=events, to_attr="replay_events"),
    )


def turns_listed(*, user_id: int) -> QuerySet[Turn]:
    """The user's turns with their citations and replayed events, in conversation order."""
    return (
        Turn.objects.filter(conversation__user_id=user_id, conversation__deleted_at__isnull=True)
        .select_related("conversation")
        .prefetch_related(*_turn_parts())
        .order_by("conversation_id", "index")
    )


def conversations_with_turns(*, user_id: int) -> QuerySet[Conversation]:
    """`conversations_listed` with each one's turns, their citations and replayed events."""
    turns = Turn.objects.order_by("index").prefetch_related(*_turn_parts())
    return conversations_listed(user_id=user_id).prefetch_related(Prefetch("turns", queryset=turns))


def conversation_turns(*, user_id: int, conversation_id: UUID) -> QuerySet[Turn]:
    return turns_listed(user_id=user_id).filter(conversation_id=conversation_id)


def turn_retrieval_metadata(*, turn: Turn) -> dict[str, Any]:
    """What retrieval did for a turn, from its stored trace, context and timings: the models,
    how many chunks were retrieved and how many went into the context, and the time per stage."""
    trace: Mapping[str, Any] = turn.retrieval_trace or {}
    context: Mapping[str, Any] = turn.context or {}
    timings: Mapping[str, Any] = turn.timings_ms or {}
    candidates = trace.get("candidates")
    aliases = context.get("aliases")
    return {
        "models": {
            **(turn.models_used or {}),
            **({"composer": turn.composer} if turn.composer else {}),
        },
        "retrieved": len(candidates) if isinstance(candidates, list) else 0,
        "used_in_context": len(aliases) if isinstance(aliases, Mapping) else 0,
        "context_tokens": context.get("used_tokens"),
        "context_budget_tokens": context.get("budget_tokens"),
        # Speculation spans are a timeline, not stages: the audit page draws them separately.
        "latency_ms": dict(stage_timings(timings, skip=("spans",))),
    }
