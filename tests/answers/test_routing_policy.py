import asyncio
from collections.abc import Sequence

import pytest

from apps.answers.routing.policy import (
    EMPTY_QUERY_REASON,
    RoutingDecision,
    classify_safely,
    fallback_classification,
    routing_decide,
    routing_settle,
)
from apps.answers.routing.types import (
    Classification,
    ClassifierError,
    HistoryMessage,
    Intent,
    Strategy,
    Tier,
    TurnAction,
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


def _settled(
    query: str, confidence: float, intent: Intent, share: float | None = None
) -> RoutingDecision:
    return routing_settle(
        decision=routing_decide(classification=_classified(confidence, intent=intent)),
        query=query,
        matched_share=share,
        heading_share=share,
        answer_match_share=0.6,
        vague_max_words=2,
    )


@pytest.mark.parametrize(
    "query",
    [
        "limit rsync bandwidth",
        "crontab syntax for running something every two hours",
        "Which permissions on the secrets file pass the strict modes check?",
        "کدام فایل پیکربندی برای محدود کردن منابع کاربر استفاده می‌شود؟",
        "show me the logs from the last boot",
        "find files modified today",  # a how-to, though worded with "find"
    ],
)
def test_a_question_routed_to_search_is_answered_above_its_list(query: str) -> None:
    decision = _settled(query, 0.9, Intent.SEARCH)
    assert decision.action == TurnAction.HYBRID and not decision.documents_only


@pytest.mark.parametrize(
    "query",
    [
        "find documents about rsync",
        "search rsync bandwidth",
        "list the pages on logrotate",
        "Q3 financial report",
        "اسناد مربوط به مرخصی",
    ],
)
def test_a_request_for_documents_keeps_the_list_alone(query: str) -> None:
    assert _settled(query, 0.9, Intent.SEARCH).documents_only


def test_an_unsure_question_whose_terms_the_passages_hold_is_answered() -> None:
    answered = _settled("default port of the rsync daemon", 0.3, Intent.FACTUAL_QUESTION, 0.75)
    assert answered.action == TurnAction.HYBRID and answered.tier == Tier.T2
    assert _settled("default port of the rsync daemon", 0.3, Intent.SEARCH, 0.5).action == (
        TurnAction.CLARIFY
    )
    taken_for_chat = _settled("package that bans IPs", 0.3, Intent.CONVERSATIONAL, 1.0)
    assert taken_for_chat.action == TurnAction.HYBRID
    assert taken_for_chat.intent == Intent.FACTUAL_QUESTION


@pytest.mark.parametrize("intent", list(Intent))
def test_a_vague_word_is_clarified_whatever_the_router_said(intent: Intent) -> None:
    assert _settled("settings", 0.95, intent, 1.0).action == TurnAction.CLARIFY
    assert _settled("تنظیمات", 0.95, intent, 1.0).action == TurnAction.CLARIFY


@pytest.mark.parametrize("query", ["thanks", "hello", "never mind", "and for windows?", "why?"])
def test_chit_chat_and_follow_ups_are_not_vague(query: str) -> None:
    assert _settled(query, 0.95, Intent.CONVERSATIONAL, 0.0).action != TurnAction.CLARIFY
