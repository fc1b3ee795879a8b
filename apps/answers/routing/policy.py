"""What the answer path does with a classification, and how a broken classifier degrades."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from apps.answers.routing.query_shape import is_document_request, is_vague_query
from apps.answers.routing.types import (
    STRATEGY_FOR_TIER,
    TIER_ORDER,
    Classification,
    HistoryMessage,
    Intent,
    QueryClassifier,
    Strategy,
    Tier,
    TurnAction,
)
from apps.corpus.text import detect_language

logger = logging.getLogger(__name__)

EMPTY_QUERY_REASON = "empty query"


@dataclass(frozen=True)
class RoutingDecision:
    classification: Classification
    tier: Tier
    strategy: Strategy
    action: TurnAction  # answer, hybrid or clarify
    bumped: bool
    # A search the query words as a request for documents: the ranked list alone.
    documents_only: bool = False
    # The route's intent when it is not the router's: a question taken for chat is answered.
    intent_override: Intent | None = None

    @property
    def intent(self) -> Intent:
        return self.intent_override or self.classification.intent


def fallback_classification(*, query: str, reason: str) -> Classification:
    """The safe default when classification is impossible: one simple lookup."""
    return Classification(
        intent=Intent.FACTUAL_QUESTION,
        confidence=0.0,
        tier=Tier.T1,
        strategy=Strategy.SIMPLE,
        decomposed_steps=(),
        language=detect_language(query),
        reasoning=reason,
        classifier="fallback",
    )


def routing_decide(
    *,
    classification: Classification,
    bump_threshold: float = 0.7,
    clarify_threshold: float = 0.55,
    max_tier: Tier = Tier.T3,
) -> RoutingDecision:
    """Turn a classification into an action, spending more effort when unsure.

    A fallback classification (router error or timeout) carries confidence 0 and so lands
    in the clarify branch, as the routing policy specifies: asking is safer than guessing.
    """
    if not 0.0 <= clarify_threshold <= bump_threshold <= 1.0:
        raise ValueError("need 0 <= clarify_threshold <= bump_threshold <= 1")
    tier = _cap(classification.tier, max_tier)
    if classification.confidence < clarify_threshold:
        return _decision(classification, tier, TurnAction.CLARIFY, bumped=False)
    if classification.confidence < bump_threshold:
        bumped_tier = _cap(
            TIER_ORDER[min(TIER_ORDER.index(tier) + 1, len(TIER_ORDER) - 1)], max_tier
        )
        return _decision(classification, bumped_tier, TurnAction.HYBRID, bumped=bumped_tier != tier)
    return _decision(classification, tier, TurnAction.ANSWER, bumped=False)


def routing_settle(
    *,
    decision: RoutingDecision,
    query: str,
    matched_share: float | None,
    heading_share: float | None = None,
    answer_match_share: float,
    vague_max_words: int,
) -> RoutingDecision:
    """The router's decision checked against the query's wording and, when they were
    measured, `matched_share` and `heading_share`: the share of the query's content terms the
    first pass's best passages hold, and their headings and titles alone.

    A vague query ("settings") is asked what it means, and so is one the router took for chat
    when all its words name sections of the documents ("yes", "never mind" do not). A question the router was
    unsure of but whose terms the passages hold is answered, with the documents beside it
    (the bump band's hybrid). A search intent keeps its list, and is answered above it unless
    it plainly asks for documents: a question is never answered by a bare list.
    """
    intent = decision.classification.intent
    if is_vague_query(query, max_words=vague_max_words):
        if intent != Intent.CONVERSATIONAL or (heading_share or 0.0) >= 1.0:
            return replace(decision, action=TurnAction.CLARIFY, bumped=False)
        return decision
    if decision.action == TurnAction.CLARIFY:
        if matched_share is None or matched_share < answer_match_share:
            return decision
        decision = _bumped(decision)
        if intent == Intent.CONVERSATIONAL:
            return replace(decision, intent_override=Intent.FACTUAL_QUESTION)
    if intent != Intent.SEARCH:
        return decision
    if is_document_request(query):
        return replace(decision, documents_only=True)
    return replace(decision, action=TurnAction.HYBRID)


def needs_match_share(*, decision: RoutingDecision, query: str, vague_max_words: int) -> bool:
    """Whether `routing_settle` reads the first pass: for an unsure router's question, and
    for a vague query the router took for chat (is it something the documents mention?)."""
    if decision.action == TurnAction.CLARIFY:
        return True
    conversational = decision.classification.intent == Intent.CONVERSATIONAL
    return conversational and is_vague_query(query, max_words=vague_max_words)


def _bumped(decision: RoutingDecision) -> RoutingDecision:
    tier = TIER_ORDER[min(TIER_ORDER.index(decision.tier) + 1, len(TIER_ORDER) - 1)]
    return replace(
        decision,
        tier=tier,
        strategy=STRATEGY_FOR_TIER[tier],
        action=TurnAction.HYBRID,
        bumped=tier != decision.tier,
    )


def _cap(tier: Tier, max_tier: Tier) -> Tier:
    return tier if TIER_ORDER.index(tier) <= TIER_ORDER.index(max_tier) else max_tier


def _decision(
    classification: Classification, tier: Tier, action: TurnAction, *, bumped: bool
) -> RoutingDecision:
    return RoutingDecision(
        classification=classification,
        tier=tier,
        strategy=STRATEGY_FOR_TIER[tier],
        action=action,
        bumped=bumped,
    )


async def classify_safely(
    *,
    classifier: QueryClassifier,
    query: str,
    history: Sequence[HistoryMessage],
    timeout_s: float,
) -> Classification:
    """Classify within `timeout_s`; any failure yields the fallback, never an exception."""
    if not query.strip():
        return fallback_classification(query=query, reason=EMPTY_QUERY_REASON)
    try:
        result = await asyncio.wait_for(
            classifier.classify(query=query, history=history), timeout=timeout_s
        )
    except TimeoutError:
        logger.warning("router %s timed out after %.2fs", classifier.name, timeout_s)
        return fallback_classification(query=query, reason=f"{classifier.name} timed out")
    except Exception as exc:
        # Routing must never fail a turn: log it and answer the simple way.
        logger.warning("router %s failed: %s", classifier.name, exc, exc_info=True)
        return fallback_classification(
            query=query, reason=f"{classifier.name} failed: {type(exc).__name__}"
        )
    if not isinstance(result, Classification):
        return fallback_classification(
            query=query, reason=f"{classifier.name} returned {type(result).__name__}"
        )
    return result
