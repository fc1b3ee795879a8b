"""The turn pipeline: one async generator of typed events, always ending in exactly one of
`finished` or `failed`. WebSocket, SSE and `manage.py ask` all consume it (through `entry`).

Stages, in order: load the turn -> speculate (classify while first-pass retrieval runs) ->
decide the route -> clarify | chat | search | answer (`answer.py`) -> end (`state.turn_finish`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from functools import partial

from django.conf import settings

from apps.answers.composing.conversational import ConversationalResponder
from apps.answers.composing.types import ComposeRequest
from apps.answers.conversations.selectors import conversation_history
from apps.answers.events import Envelope, EventType
from apps.answers.providers.registry import Providers
from apps.answers.providers.usage import usage_meter_close, usage_meter_open
from apps.answers.retrieval.types import ContextWindow, RetrievalResult
from apps.answers.routing.policy import (
    RoutingDecision,
    needs_match_share,
    routing_decide,
    routing_settle,
)
from apps.answers.routing.types import HistoryMessage, Intent, TurnAction
from apps.answers.turn.answer import answer_events, compose_failure
from apps.answers.turn.clarify import clarification_data, terms_matched_share
from apps.answers.turn.compose_stream import ComposeOutcome, compose_events
from apps.answers.turn.outcomes import TurnClassified, TurnFinished
from apps.answers.turn.recorder import TurnEndedElsewhere, TurnRecorder
from apps.answers.turn.search_results import search_results_data
from apps.answers.turn.selectors import TurnAsked, turn_asked_get
from apps.answers.turn.services import FIRST_TURN_INDEX, turn_classified_record
from apps.answers.turn.speculation import Speculation, speculate
from apps.answers.turn.state import TurnState, retrieval_record, turn_finish
from apps.corpus.search.legs import SearchFilters
from ragplatform.db_threads import db_call
from ragplatform.errors import FailureCode

logger = logging.getLogger(__name__)


async def turn_run(
    *, turn_id: int, providers: Providers, filters: SearchFilters | None = None
) -> AsyncIterator[Envelope]:
    recorder = TurnRecorder(turn_id)
    counting = usage_meter_open(recorder.usage)
    try:
        async for envelope in _turn(turn_id, providers, filters or SearchFilters(), recorder):
            yield envelope
    except asyncio.CancelledError:
        if not recorder.terminated:
            await asyncio.shield(recorder.fail(FailureCode.CANCELLED, "The answer was cancelled."))
        raise
    except TurnEndedElsewhere:
        # This process stalled past its lease and the turn was interrupted meanwhile: the
        # stored end stands and is what this turn's caller hears last.
        logger.warning("Turn %s was ended elsewhere while answering; stopped", turn_id)
        assert recorder.terminal is not None
        yield recorder.terminal
    except Exception:
        logger.exception("Turn %s failed", turn_id)
        if not recorder.terminated:
            yield await recorder.fail(
                FailureCode.INTERNAL, "Something went wrong while answering; please try again."
            )
    finally:
        usage_meter_close(counting)


async def _turn(
    turn_id: int, providers: Providers, filters: SearchFilters, recorder: TurnRecorder
) -> AsyncIterator[Envelope]:
    turn, history = await db_call(_turn_with_history)(turn_id)
    state = TurnState(turn_id, turn.question, turn.conversation_id, history, filters, recorder)
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
    decision = await _settled(state, decision, speculation)
    yield await _classified(state, decision, speculation)
    async for envelope in _route(state, decision, speculation, providers):
        yield envelope


def _turn_with_history(turn_id: int) -> tuple[TurnAsked, tuple[HistoryMessage, ...]]:
    turn = turn_asked_get(turn_id=turn_id)
    if turn.index == FIRST_TURN_INDEX:  # a new conversation: nothing before it
        return turn, ()
    return turn, conversation_history(conversation_id=turn.conversation_id, before_index=turn.index)


async def _settled(
    state: TurnState, decision: RoutingDecision, speculation: Speculation
) -> RoutingDecision:
    """The decision checked against the query's wording and, where that decides, against
    what the first pass found (only then is it waited for)."""
    vague_max_words = settings.RAG_VAGUE_QUERY_MAX_WORDS
    share = heading_share = None
    if needs_match_share(decision=decision, query=state.question, vague_max_words=vague_max_words):
        found = await _first_pass_or_nothing(speculation)
        query = found.rewrite.query if found and found.rewrite else state.question
        chunks = found.chunks if found else ()
        share = terms_matched_share(query=query, found=chunks)
        heading_share = terms_matched_share(query=query, found=chunks, headings_only=True)
    return routing_settle(
        decision=decision,
        query=state.question,
        matched_share=share,
        heading_share=heading_share,
        answer_match_share=settings.RAG_CLARIFY_MATCH_SHARE,
        vague_max_words=vague_max_words,
    )


async def _classified(
    state: TurnState, decision: RoutingDecision, speculation: Speculation
) -> Envelope:
    c = speculation.classification
    state.timings["spans"] = speculation.spans_ms
    if c.fallback_reason:
        state.fallback_reason = f"router {c.fallback_reason}"
    classified = TurnClassified(
        intent=c.intent,
        router_confidence=c.confidence,
        tier=decision.tier,
        strategy=decision.strategy,
        action=decision.action,
        language=c.language,
        classification=c.as_dict(),
    )
    data = {**c.as_dict(), "tier": decision.tier, "strategy": decision.strategy}
    return await state.recorder.emit(
        EventType.CLASSIFICATION,
        {**data, "action": decision.action, "bumped": decision.bumped, "router_tier": c.tier},
        along=partial(turn_classified_record, turn_id=state.turn_id, classified=classified),
    )


async def _route(
    state: TurnState, decision: RoutingDecision, speculation: Speculation, providers: Providers
) -> AsyncIterator[Envelope]:
    intent = decision.intent
    if decision.action == TurnAction.CLARIFY:
        route = _clarify(state, speculation)
    elif intent == Intent.CONVERSATIONAL:
        speculation.drop()
        route = _chat(state, speculation, providers)
    elif intent == Intent.SEARCH and decision.documents_only:
        route = _search(state, speculation)
    else:
        route = answer_events(state, decision, speculation, providers)
    async for envelope in route:
        yield envelope


async def _clarify(state: TurnState, speculation: Speculation) -> AsyncIterator[Envelope]:
    found = await _first_pass_or_nothing(speculation)
    data = clarification_data(
        language=speculation.classification.language, found=found.chunks if found else ()
    )
    yield await state.recorder.emit(EventType.CLARIFICATION, data)
    yield await turn_finish(
        state, TurnFinished(answer=str(data["question"]), action=TurnAction.CLARIFY)
    )


async def _first_pass_or_nothing(speculation: Speculation) -> RetrievalResult | None:
    try:
        # Topics for a clarifying question are a nicety, not worth a long wait.
        wait_s = settings.RAG_CLARIFY_TOPICS_WAIT_S
        return await asyncio.wait_for(speculation.retrieval(), timeout=wait_s)
    except (TimeoutError, Exception):
        return None


async def _search(state: TurnState, speculation: Speculation) -> AsyncIterator[Envelope]:
    result = await speculation.retrieval()
    await retrieval_record(state, result)
    yield await state.recorder.emit(
        EventType.SEARCH_RESULTS,
        await search_results_data(
            query=state.question,
            chunks=result.chunks,
            model_id=result.trace.models.get("embedder", ""),
        ),
    )
    yield await turn_finish(state, TurnFinished(answer="", action=TurnAction.SEARCH))


async def _chat(
    state: TurnState, speculation: Speculation, providers: Providers
) -> AsyncIterator[Envelope]:
    c = speculation.classification
    outcome = ComposeOutcome()
    request = ComposeRequest(
        query=state.question,
        intent=c.intent,
        language=c.language,
        context=ContextWindow((), 1, 0, ()),
        history=state.history,
    )
    async for envelope in compose_events(
        composer=providers.responder,
        fallback=ConversationalResponder(),  # the fixed replies, when the model fails
        request=request,
        recorder=state.recorder,
        outcome=outcome,
    ):
        yield envelope
    if outcome.error is not None:  # cut by its time or token limit: shown as cut, never whole
        yield await state.recorder.end(compose_failure(state, outcome))
        return
    finished = TurnFinished(
        answer=outcome.text,
        action=TurnAction.CHAT,
        composer=outcome.composer,
        fallback_reason=outcome.fallback_reason,
    )
    yield await turn_finish(state, finished)
