"""The answer route (factual, procedural, comparison): retrieve -> context -> compose ->
confidence and follow-ups -> end. Citations are built from the retrieved chunks, never
trusted from the model's text."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from django.conf import settings

from apps.answers.composing.confidence import confidence_band
from apps.answers.composing.followups import NEIGHBOUR_REACH, ModelLimits, followups_suggest
from apps.answers.composing.types import ComposeRequest
from apps.answers.events import Envelope, EventType
from apps.answers.providers.registry import Providers
from apps.answers.retrieval.context import context_build
from apps.answers.retrieval.fusion import candidates_merge
from apps.answers.retrieval.types import ContextWindow, RetrievalRequest, RetrievalResult
from apps.answers.routing.policy import RoutingDecision
from apps.answers.routing.types import Strategy, TurnAction
from apps.answers.streaming import sentences_without_citation
from apps.answers.turn.compose_stream import (
    ComposeOutcome,
    answer_confidence,
    attributed_events,
    compose_events,
    confidence_inputs,
)
from apps.answers.turn.outcomes import TurnFailed, TurnFinished
from apps.answers.turn.search_results import search_results_data
from apps.answers.turn.services import citations_store
from apps.answers.turn.speculation import Speculation
from apps.answers.turn.state import TurnState, retrieval_record, turn_finish_after
from apps.corpus.documents.reading import chunks_around
from apps.corpus.search.embedders import EmbedderError
from ragplatform.db_threads import db_call
from ragplatform.errors import FailureCode

logger = logging.getLogger(__name__)


async def answer_events(
    state: TurnState, decision: RoutingDecision, speculation: Speculation, providers: Providers
) -> AsyncIterator[Envelope]:
    c = speculation.classification
    result = await _retrieve(state, decision, speculation, providers)
    context = context_build(chunks=result.chunks, budget_tokens=providers.context_budget_tokens)
    await retrieval_record(state, result, context=_context_data(context))
    hybrid = decision.action == TurnAction.HYBRID
    if hybrid:
        yield await state.recorder.emit(
            EventType.SEARCH_RESULTS,
            await search_results_data(
                query=state.question,
                chunks=result.chunks,
                model_id=result.trace.models.get("embedder", ""),
            ),
        )
    outcome = ComposeOutcome()
    # A follow-up is answered as its standalone rewrite: "who stars in it?" alone would pick
    # sentences about anyone starring in anything.
    query = result.rewrite.query if result.rewrite else state.question
    request = ComposeRequest(
        query=query,
        intent=decision.intent,
        language=c.language,
        context=context,
        history=state.history,
        hybrid=hybrid,
        bridges=result.bridges,
        query_vector=await _query_vector(query, result, speculation, providers),
    )
    compose_start = time.perf_counter()
    async for envelope in compose_events(
        composer=providers.composer,
        fallback=providers.fallback_composer,
        request=request,
        recorder=state.recorder,
        outcome=outcome,
    ):
        yield envelope
    async for envelope in attributed_events(
        request=request, recorder=state.recorder, outcome=outcome
    ):
        yield envelope
    state.timings["compose_ms"] = round((time.perf_counter() - compose_start) * 1000, 2)
    async for envelope in _after_answer(state, decision, request, result, outcome, providers):
        yield envelope


async def _retrieve(
    state: TurnState, decision: RoutingDecision, speculation: Speculation, providers: Providers
) -> RetrievalResult:
    """The first pass already searched the question itself: simple questions take its result,
    wider strategies and comparisons start from its candidates instead of searching again."""
    first = await speculation.retrieval()
    steps = speculation.classification.decomposed_steps
    strategy = decision.strategy
    if strategy == Strategy.SIMPLE and not steps:
        return first
    results = [
        await providers.retriever.retrieve(
            RetrievalRequest(
                query=state.question,
                filters=state.filters,
                strategy=strategy,
                original_candidates=first.original_candidates,
                rewrite=first.rewrite,
            )
        )
    ]
    for step in steps:
        results.append(
            await providers.retriever.retrieve(
                RetrievalRequest(query=step, filters=state.filters, strategy=strategy)
            )
        )
    return results[0] if len(results) == 1 else _sides_merged(results)


async def _query_vector(
    query: str, result: RetrievalResult, speculation: Speculation, providers: Providers
) -> tuple[float, ...] | None:
    """The embedding of `query` retrieval already made (a second pass that reused the first
    pass's candidates made none of its own), when it is the composer's model's."""
    if result.trace.models.get("embedder") != providers.embedder.model_id:
        return None
    first = await speculation.retrieval()
    return result.query_vector(query) or first.query_vector(query)


def _sides_merged(results: list[RetrievalResult]) -> RetrievalResult:
    """Comparison / multi-part: one retrieval per side, interleaved so every side is in context."""
    merged = candidates_merge([[c.candidate for c in r.chunks] for r in results])
    by_id = {c.chunk_id: c for r in results for c in r.chunks}
    trace = results[0].trace
    for extra in results[1:]:
        trace.variants.extend(extra.trace.variants)
        trace.timings_ms.update({f"side:{k}": v for k, v in extra.trace.timings_ms.items()})
    # The question's rewrite stays with the result: the composer answers the standalone query.
    return RetrievalResult(
        tuple(by_id[c.chunk_id] for c in merged),
        trace,
        rewrite=results[0].rewrite,
        bridges=results[0].bridges,
    )


async def _after_answer(
    state: TurnState,
    decision: RoutingDecision,
    request: ComposeRequest,
    result: RetrievalResult,
    outcome: ComposeOutcome,
    providers: Providers,
) -> AsyncIterator[Envelope]:
    await db_call(citations_store)(turn_id=state.turn_id, citations=outcome.citations)
    if outcome.error is not None or not outcome.text.strip():
        yield await state.recorder.end(compose_failure(state, outcome))
        return
    value = answer_confidence(outcome=outcome, chunks=result.chunks)
    band = confidence_band(value)
    yield await state.recorder.emit(EventType.CONFIDENCE, {"value": round(value, 3), "band": band})
    questions = await _followups(state, request, result, outcome, providers)
    # The documents the suggestions may draw on, so a replay can withhold them from a reader
    # who may no longer see one of those documents.
    sources = sorted({c.document_id for c in result.chunks})
    followups = (EventType.FOLLOWUPS, {"questions": questions, "documents": sources})
    unsupported = sentences_without_citation(text=outcome.text, marks=outcome.marks)
    finished = TurnFinished(
        answer=outcome.text,
        action=decision.action,  # answer, or hybrid: answered with the document list
        composer=outcome.composer,
        confidence=value,
        confidence_band=band,
        refused=outcome.refused,
        refusal_reason=outcome.refusal_reason,
        followups=tuple(questions),
        fallback_reason=outcome.fallback_reason,
        dropped_citations=tuple(outcome.dropped),
        unsupported_sentences=0 if outcome.refused else unsupported,
        confidence_inputs=confidence_inputs(outcome=outcome, chunks=result.chunks),
        citations=len(outcome.citations),
    )
    # The follow-ups are the last thing computed: stored in one write with the end.
    for envelope in await turn_finish_after(state, finished, before=[followups]):
        yield envelope


async def _followups(
    state: TurnState,
    request: ComposeRequest,
    result: RetrievalResult,
    outcome: ComposeOutcome,
    providers: Providers,
) -> list[str]:
    cited = {r.alias for r in outcome.citations}
    cited_ids = [c.chunk.chunk_id for c in request.context.chunks if c.alias in cited]
    try:
        # The sections beside the cited ones: what a reader of that passage would ask next.
        neighbours = (
            await db_call(chunks_around)(chunk_ids=cited_ids, reach=NEIGHBOUR_REACH)
            if cited_ids and not outcome.refused
            else []
        )
        return await followups_suggest(
            query=state.question,
            answer_text=outcome.text,
            context=request.context,
            cited_aliases=cited,
            candidates=result.chunks,
            embedder=providers.embedder,
            language=request.language,
            neighbours=neighbours,
            asked=[m.text for m in state.history if m.role == "user"],
            refused=outcome.refused,
            # The model that just failed to answer is not asked again: the offline
            # suggestions stand, and the end is not held back by a second wait.
            chat=None if outcome.fallback_reason else providers.chat,
            limits=ModelLimits(
                timeout_s=settings.RAG_FOLLOWUPS_TIMEOUT_S,
                max_tokens=settings.RAG_FOLLOWUPS_MAX_TOKENS,
            ),
        )
    except EmbedderError as exc:  # suggestions are a nicety; the answer stands without them
        logger.warning("No follow-up suggestions, the embedder failed: %s", exc)
        return []


def compose_failure(state: TurnState, outcome: ComposeOutcome) -> TurnFailed:
    """The end of a turn whose composer failed or was cut: what was written stays, partial."""
    code = outcome.error.code if outcome.error else FailureCode.EMPTY_ANSWER
    message = (
        "No answer could be produced."
        if not outcome.text
        else "The answer reached the model's length limit and is incomplete."
        if code == FailureCode.ANSWER_TRUNCATED
        else "The model stopped before finishing; the partial answer is kept."
    )
    return TurnFailed(
        code=code,
        message=message,
        answer=outcome.text,
        partial=bool(outcome.text),
        composer=outcome.composer,
        timings_ms=state.timings_total(),
    )


def _context_data(context: ContextWindow) -> dict[str, object]:
    return {
        "budget_tokens": context.budget_tokens,
        "used_tokens": context.used_tokens,
        "utilisation": round(context.utilisation, 3),
        "dropped_chunk_ids": list(context.dropped_chunk_ids),
        "aliases": {c.alias: c.chunk.chunk_id for c in context.chunks},
    }
