"""The turn pipeline: one async generator of typed events, always ending in exactly one of
`finished` or `failed`. WebSocket, SSE and `manage.py ask` all consume it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.utils import timezone

from apps.answers.composing.confidence import confidence_band, confidence_blend, retrieval_quality
from apps.answers.composing.followups import followups_suggest
from apps.answers.composing.types import ComposeRequest
from apps.answers.events import Envelope, EventType, FailureCode
from apps.answers.models import TurnStatus
from apps.answers.providers.registry import Providers
from apps.answers.retrieval.context import context_build
from apps.answers.retrieval.fusion import candidates_merge
from apps.answers.retrieval.types import ContextWindow, RetrievalRequest, RetrievalResult
from apps.answers.routing.policy import RoutingDecision, routing_decide
from apps.answers.routing.types import Classification, HistoryMessage, Intent
from apps.answers.selectors import conversation_history, turn_get
from apps.answers.services import TurnRecorder, citations_store, turn_update
from apps.answers.signals import turn_finished
from apps.answers.streaming import sentences_without_citation
from apps.answers.turn.clarify import clarification_data
from apps.answers.turn.compose_stream import ComposeOutcome, compose_events
from apps.answers.turn.search_results import search_results_data
from apps.answers.turn.speculation import Speculation, speculate
from apps.corpus.search import SearchFilters

logger = logging.getLogger(__name__)


@dataclass
class TurnState:
    turn_id: int
    question: str
    conversation_id: Any
    history: tuple[HistoryMessage, ...]
    filters: SearchFilters
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, Any] = field(default_factory=dict)


async def turn_run(
    *, turn_id: int, providers: Providers, filters: SearchFilters | None = None
) -> AsyncIterator[Envelope]:
    recorder = TurnRecorder(turn_id)
    try:
        async for envelope in _turn(turn_id, providers, filters or SearchFilters(), recorder):
            yield envelope
    except asyncio.CancelledError:
        if not recorder.terminated:
            await asyncio.shield(recorder.fail(FailureCode.CANCELLED, "The answer was cancelled."))
        raise
    except Exception:
        logger.exception("Turn %s failed", turn_id)
        if not recorder.terminated:
            yield await recorder.fail(
                FailureCode.INTERNAL, "Something went wrong while answering; please try again."
            )


async def _turn(
    turn_id: int, providers: Providers, filters: SearchFilters, recorder: TurnRecorder
) -> AsyncIterator[Envelope]:
    turn = await sync_to_async(turn_get)(turn_id=turn_id)
    history = await sync_to_async(conversation_history)(
        conversation_id=turn.conversation_id, before_index=turn.index
    )
    state = TurnState(turn_id, turn.question, turn.conversation_id, history, filters)
    speculation = await speculate(
        query=state.question,
        history=history,
        filters=filters,
        providers=providers,
        started=state.started,
    )
    decision = routing_decide(
        classification=speculation.classification,
        bump_threshold=providers.bump_threshold,
        clarify_threshold=providers.clarify_threshold,
    )
    yield await _classified(state, decision, speculation, recorder)
    async for envelope in _route(state, decision, speculation, providers, recorder):
        yield envelope


async def _classified(
    state: TurnState, decision: RoutingDecision, speculation: Speculation, recorder: TurnRecorder
) -> Envelope:
    c = speculation.classification
    state.timings["spans"] = speculation.spans_ms
    await sync_to_async(turn_update)(
        turn_id=state.turn_id,
        intent=str(c.intent),
        router_confidence=c.confidence,
        tier=str(decision.tier),
        strategy=str(decision.strategy),
        action=decision.action,
        language=c.language,
        classification=c.as_dict(),
    )
    data = {**c.as_dict(), "tier": str(decision.tier), "strategy": str(decision.strategy)}
    return await recorder.emit(
        EventType.CLASSIFICATION,
        {**data, "action": decision.action, "bumped": decision.bumped, "router_tier": str(c.tier)},
    )


async def _route(
    state: TurnState,
    decision: RoutingDecision,
    speculation: Speculation,
    providers: Providers,
    recorder: TurnRecorder,
) -> AsyncIterator[Envelope]:
    c = speculation.classification
    if decision.action == "clarify":
        found = await _first_pass_or_nothing(speculation)
        data = clarification_data(language=c.language, found=found.chunks if found else ())
        yield await recorder.emit(EventType.CLARIFICATION, data)
        yield await _finish(state, recorder, answer=str(data["question"]), action="clarify")
    elif c.intent == Intent.CONVERSATIONAL:
        speculation.drop()
        async for envelope in _chat(state, c, providers, recorder):
            yield envelope
    elif c.intent == Intent.SEARCH:
        result = await speculation.retrieval()
        await _trace(state, result)
        yield await recorder.emit(
            EventType.SEARCH_RESULTS,
            await search_results_data(query=state.question, chunks=result.chunks),
        )
        yield await _finish(state, recorder, answer="", action="search")
    else:
        async for envelope in _answer(state, decision, speculation, providers, recorder):
            yield envelope


async def _first_pass_or_nothing(speculation: Speculation) -> RetrievalResult | None:
    try:
        return await asyncio.wait_for(speculation.retrieval(), timeout=2.0)
    except (TimeoutError, Exception):
        return None


async def _chat(
    state: TurnState, c: Classification, providers: Providers, recorder: TurnRecorder
) -> AsyncIterator[Envelope]:
    outcome = ComposeOutcome()
    request = ComposeRequest(
        query=state.question,
        intent=str(c.intent),
        language=c.language,
        context=ContextWindow((), 1, 0, ()),
        history=state.history,
    )
    async for envelope in compose_events(
        composer=providers.responder,
        fallback=None,
        request=request,
        recorder=recorder,
        outcome=outcome,
    ):
        yield envelope
    yield await _finish(
        state, recorder, answer=outcome.text, action="chat", composer=outcome.composer
    )


async def _retrieve(
    state: TurnState, decision: RoutingDecision, speculation: Speculation, providers: Providers
) -> RetrievalResult:
    steps = speculation.classification.decomposed_steps
    if decision.strategy == "simple" and not steps:
        return await speculation.retrieval()
    speculation.drop()
    queries = [state.question, *steps] if steps else [state.question]
    results = [
        await providers.retriever.retrieve(
            RetrievalRequest(query=q, filters=state.filters, strategy=str(decision.strategy))
        )
        for q in queries
    ]
    if len(results) == 1:
        return results[0]
    # Comparison / multi-part: one retrieval per side, interleaved so every side is in context.
    merged = candidates_merge([[c.candidate for c in r.chunks] for r in results])
    by_id = {c.chunk_id: c for r in results for c in r.chunks}
    trace = results[0].trace
    for extra in results[1:]:
        trace.variants.extend(extra.trace.variants)
        trace.timings_ms.update({f"side:{k}": v for k, v in extra.trace.timings_ms.items()})
    return RetrievalResult(tuple(by_id[c.chunk_id] for c in merged), trace)


async def _answer(
    state: TurnState,
    decision: RoutingDecision,
    speculation: Speculation,
    providers: Providers,
    recorder: TurnRecorder,
) -> AsyncIterator[Envelope]:
    c = speculation.classification
    result = await _retrieve(state, decision, speculation, providers)
    await _trace(state, result)
    hybrid = decision.action == "hybrid"
    if hybrid:
        yield await recorder.emit(
            EventType.SEARCH_RESULTS,
            await search_results_data(query=state.question, chunks=result.chunks),
        )
    context = context_build(chunks=result.chunks, budget_tokens=providers.context_budget_tokens)
    await sync_to_async(turn_update)(turn_id=state.turn_id, context=_context_data(context))
    outcome = ComposeOutcome()
    request = ComposeRequest(
        query=state.question,
        intent=str(c.intent),
        language=c.language,
        context=context,
        history=state.history,
        hybrid=hybrid,
    )
    compose_start = time.perf_counter()
    async for envelope in compose_events(
        composer=providers.composer,
        fallback=providers.fallback_composer,
        request=request,
        recorder=recorder,
        outcome=outcome,
    ):
        yield envelope
    state.timings["compose_ms"] = round((time.perf_counter() - compose_start) * 1000, 2)
    async for envelope in _after_answer(state, result, context, outcome, providers, recorder, c):
        yield envelope


async def _after_answer(
    state: TurnState,
    result: RetrievalResult,
    context: ContextWindow,
    outcome: ComposeOutcome,
    providers: Providers,
    recorder: TurnRecorder,
    c: Classification,
) -> AsyncIterator[Envelope]:
    await sync_to_async(citations_store)(turn_id=state.turn_id, citations=outcome.citations)
    if outcome.error is not None or not outcome.text.strip():
        code = _failure_code(outcome.error.code if outcome.error else "empty_answer")
        yield await recorder.fail(
            code,
            "The model stopped before finishing; the partial answer is kept."
            if outcome.text
            else "No answer could be produced.",
            answer=outcome.text,
            partial=bool(outcome.text),
            composer=outcome.composer,
            timings_ms=_timings(state),
        )
        return
    value = confidence_blend(
        support=outcome.support if outcome.support is not None else 0.0,
        retrieval=retrieval_quality(result.chunks),
    )
    band = confidence_band(value)
    yield await recorder.emit(EventType.CONFIDENCE, {"value": round(value, 3), "band": band})
    questions = await followups_suggest(
        query=state.question,
        answer_text=outcome.text,
        context=context,
        cited_aliases={r.alias for r in outcome.citations},
        candidates=result.chunks,
        embedder=providers.embedder,
        chat=providers.chat,
        language=c.language,
    )
    yield await recorder.emit(EventType.FOLLOWUPS, {"questions": questions})
    yield await _finish(
        state,
        recorder,
        answer=outcome.text,
        action="answer",
        composer=outcome.composer,
        confidence=value,
        confidence_band=band,
        refused=outcome.refused,
        followups=questions,
        fallback_reason=outcome.fallback_reason,
        dropped_citations=outcome.dropped,
        unsupported_sentences=0
        if outcome.refused
        else sentences_without_citation(text=outcome.text, marks=outcome.marks),
        citations=len(outcome.citations),
    )


async def _finish(
    state: TurnState,
    recorder: TurnRecorder,
    *,
    answer: str,
    action: str,
    citations: int = 0,
    **fields: Any,
) -> Envelope:
    fields.setdefault("composer", "")
    await sync_to_async(turn_update)(
        turn_id=state.turn_id,
        status=TurnStatus.FINISHED,
        answer=answer,
        finished_at=timezone.now(),
        timings_ms=_timings(state),
        **fields,
    )
    envelope = await recorder.emit(
        EventType.FINISHED,
        {
            "answer": answer,
            "action": action,
            "citations": citations,
            "confidence": fields.get("confidence"),
            "refused": fields.get("refused", False),
            "composer": fields["composer"],
        },
    )
    await sync_to_async(_post_turn)(state.turn_id)
    return envelope


def _post_turn(turn_id: int) -> None:
    """Best effort: a failing receiver is logged, never fails the answer that is already stored."""
    for receiver, response in turn_finished.send_robust(sender=None, turn_id=turn_id):
        if isinstance(response, Exception):
            logger.error("Post-turn step %s failed for turn %s: %r", receiver, turn_id, response)


async def _trace(state: TurnState, result: RetrievalResult) -> None:
    state.timings["retrieval"] = result.trace.timings_ms
    await sync_to_async(turn_update)(
        turn_id=state.turn_id,
        retrieval_trace=result.trace.as_dict(),
        models_used=result.trace.models,
    )


def _timings(state: TurnState) -> dict[str, Any]:
    timings = dict(state.timings)
    timings["total_ms"] = round((time.perf_counter() - state.started) * 1000, 2)
    return timings


def _context_data(context: ContextWindow) -> dict[str, Any]:
    return {
        "budget_tokens": context.budget_tokens,
        "used_tokens": context.used_tokens,
        "utilisation": round(context.utilisation, 3),
        "dropped_chunk_ids": list(context.dropped_chunk_ids),
        "aliases": {c.alias: c.chunk.chunk_id for c in context.chunks},
    }


def _failure_code(code: str) -> FailureCode:
    try:
        return FailureCode(code)
    except ValueError:
        return FailureCode.INTERNAL
