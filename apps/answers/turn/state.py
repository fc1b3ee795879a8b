"""What one running turn carries between its stages, and the writes every route shares."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from apps.answers.events import Envelope
from apps.answers.retrieval.types import RetrievalResult
from apps.answers.routing.types import HistoryMessage
from apps.answers.turn.outcomes import TurnFinished, TurnRetrieved
from apps.answers.turn.recorder import PendingEvent, TurnRecorder
from apps.answers.turn.services import turn_retrieval_record
from apps.corpus.search.legs import SearchFilters
from ragplatform.db_threads import db_call


@dataclass
class TurnState:
    turn_id: int
    question: str
    conversation_id: UUID
    history: tuple[HistoryMessage, ...]
    filters: SearchFilters
    recorder: TurnRecorder
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, Any] = field(default_factory=dict)
    # Why a stage before composing fell back (the LLM router); joined with the composer's.
    fallback_reason: str = ""

    def timings_total(self) -> dict[str, Any]:
        timings = dict(self.timings)
        timings["total_ms"] = round((time.perf_counter() - self.started) * 1000, 2)
        return timings


async def retrieval_record(
    state: TurnState, result: RetrievalResult, *, context: dict[str, Any] | None = None
) -> None:
    """What retrieval found, and the context built from it for an answer, in one write."""
    state.timings["retrieval"] = result.trace.timings_ms
    retrieved = TurnRetrieved(
        retrieval_trace=result.trace.as_dict(), models_used=result.trace.models
    )
    await db_call(turn_retrieval_record)(
        turn_id=state.turn_id, retrieved=retrieved, context=context
    )


async def turn_finish(state: TurnState, finished: TurnFinished) -> Envelope:
    """End the turn with a reply; the total time is taken here, as the last thing it does."""
    return (await turn_finish_after(state, finished, before=()))[-1]


async def turn_finish_after(
    state: TurnState, finished: TurnFinished, *, before: Sequence[PendingEvent]
) -> list[Envelope]:
    """`turn_finish`, with the turn's last events stored in the same write as its end."""
    reasons = [r for r in (state.fallback_reason, finished.fallback_reason) if r]
    ending = replace(
        finished, timings_ms=state.timings_total(), fallback_reason="; ".join(reasons)[:300]
    )
    return await state.recorder.end_after(ending, before=before)
