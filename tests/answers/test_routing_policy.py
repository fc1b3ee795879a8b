import asyncio
from collections.abc import Sequence

import pytest

from apps.answers.routing.policy import (
    EMPTY_QUERY_REASON,
    classify_safely,
    fallback_classification,
    routing_decide,
)
from apps.answers.routing.types import (
    Classification,
    ClassifierError,
    HistoryMessage,
    Intent,
    Strategy,
    Tier,
)
from apps.corpus.text import Language


def _classified(confidence: float, tier: Tier = Tier.T1, intent: Intent = Intent.SEARCH):
    strategy = {
        Tier.T0: Strategy.NONE,
        Tier.T1: Strategy.SIMPLE,
        Tier.T2: Strategy.MODERATE,
        Tier.T3: Strategy.COMPLEX,
    }[tier]
    return Classification(
        intent=intent,
        confidence=confidence,
        tier=tier,
        strategy=strategy,
        decomposed_steps=(),
        language=Language.EN,
        reasoning="",
        classifier="trained",
    )


class _Fake:
    name = "fake"

    def __init__(self, *, result: object = None, error: Exception | None = None, delay: float = 0):
        self.result, self.error, self.delay = result, error, delay
        self.calls = 0

    async def classify(self, *, query: str, history: Sequence[HistoryMessage]) -> Classification:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


def test_fallback_is_t1_simple_with_zero_confidence():
    result = fallback_classification(query="سلام دنیا", reason="boom")
    assert (result.intent, result.tier, result.strategy) == (
        Intent.FACTUAL_QUESTION,
        Tier.T1,
        Strategy.SIMPLE,
    )
    assert result.confidence == 0.0
    assert result.classifier == "fallback"
    assert result.reasoning == "boom"
    assert result.language == "fa"
    assert result.decomposed_steps == ()


@pytest.mark.parametrize(
    ("confidence", "tier", "action", "expected_tier", "bumped"),
    [
        (0.95, Tier.T1, "answer", Tier.T1, False),
        (0.70, Tier.T1, "answer", Tier.T1, False),
        (0.69, Tier.T1, "hybrid", Tier.T2, True),
        (0.55, Tier.T2, "hybrid", Tier.T3, True),
        (0.60, Tier.T3, "hybrid", Tier.T3, False),
        (0.54, Tier.T1, "clarify", Tier.T1, False),
        (0.0, Tier.T2, "clarify", Tier.T2, False),
    ],
)
def test_routing_thresholds(confidence, tier, action, expected_tier, bumped):
    decision = routing_decide(classification=_classified(confidence, tier))
    assert decision.action == action
    assert decision.tier is expected_tier
    assert decision.bumped is bumped
    assert (
        decision.strategy
        is {
            Tier.T1: Strategy.SIMPLE,
            Tier.T2: Strategy.MODERATE,
            Tier.T3: Strategy.COMPLEX,
        }[expected_tier]
    )


def test_bump_is_capped_by_max_tier():
    decision = routing_decide(classification=_classified(0.6, Tier.T2), max_tier=Tier.T2)
    assert (decision.tier, decision.action, decision.bumped) == (Tier.T2, "hybrid", False)
    capped = routing_decide(classification=_classified(0.9, Tier.T3), max_tier=Tier.T2)
    assert capped.tier is Tier.T2
    assert capped.strategy is Strategy.MODERATE


def test_unsure_chit_chat_gets_a_retrieval_pass():
    decision = routing_decide(
        classification=_classified(0.6, Tier.T0, intent=Intent.CONVERSATIONAL)
    )
    assert (decision.tier, decision.action, decision.bumped) == (Tier.T1, "hybrid", True)


def test_a_router_failure_is_t1_simple_and_lands_in_clarify():
    decision = routing_decide(classification=fallback_classification(query="q", reason="x"))
    assert (decision.action, decision.tier, decision.strategy) == (
        "clarify",
        Tier.T1,
        Strategy.SIMPLE,
    )


def test_thresholds_are_validated():
    with pytest.raises(ValueError):
        routing_decide(classification=_classified(0.9), bump_threshold=0.5, clarify_threshold=0.6)


async def test_classify_safely_passes_a_good_result_through():
    expected = _classified(0.9)
    fake = _Fake(result=expected)
    assert await classify_safely(classifier=fake, query="q", history=(), timeout_s=1) is expected


@pytest.mark.parametrize(
    "error", [ClassifierError("bad json"), RuntimeError("boom"), KeyError("x"), ValueError()]
)
async def test_classify_safely_turns_any_error_into_the_fallback(error):
    result = await classify_safely(
        classifier=_Fake(error=error), query="vpn setup?", history=(), timeout_s=1
    )
    assert result.classifier == "fallback"
    assert (result.tier, result.confidence) == (Tier.T1, 0.0)
    assert type(error).__name__ in result.reasoning


async def test_classify_safely_times_out_to_the_fallback():
    result = await classify_safely(
        classifier=_Fake(result=_classified(0.9), delay=5), query="q", history=(), timeout_s=0.05
    )
    assert result.classifier == "fallback"
    assert "timed out" in result.reasoning


async def test_classify_safely_rejects_a_non_classification():
    result = await classify_safely(
        classifier=_Fake(result={"intent": "search"}), query="q", history=(), timeout_s=1
    )
    assert result.classifier == "fallback"


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
async def test_empty_query_is_the_fallback_without_calling_the_classifier(query):
    fake = _Fake(result=_classified(0.9))
    result = await classify_safely(classifier=fake, query=query, history=(), timeout_s=1)
    assert result.classifier == "fallback"
    assert result.reasoning == EMPTY_QUERY_REASON
    assert result.confidence == 0.0
    assert fake.calls == 0
