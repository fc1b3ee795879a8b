"""What the answer path does with a classification, and how a broken classifier degrades."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

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
