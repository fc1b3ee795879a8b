"""Router metrics, cross-checked against scikit-learn, and the evaluation report."""

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest
from sklearn import metrics

from apps.answers.routing.evaluation import (
    INTENT_LABELS,
    LabelledQuery,
    confusion_matrix,
    expected_calibration_error,
    format_report,
    per_class_metrics,
    reliability_table,
    router_evaluate,
)
from apps.answers.routing.types import (
    STRATEGY_FOR_TIER,
    Classification,
    ClassifierError,
    HistoryMessage,
    Intent,
    Tier,
)
from apps.corpus.text import Language


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_match_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    # Drop one label from the predictions so zero-division paths are exercised.
    gold = list(rng.choice(INTENT_LABELS, size=200))
    predicted = list(rng.choice(INTENT_LABELS[:-1], size=200))
    matrix = confusion_matrix(gold, predicted, INTENT_LABELS)
    np.testing.assert_array_equal(
        matrix, metrics.confusion_matrix(gold, predicted, labels=list(INTENT_LABELS))
    )
    per_class = per_class_metrics(matrix, INTENT_LABELS)
    precision, recall, f1, support = metrics.precision_recall_fscore_support(
        gold, predicted, labels=list(INTENT_LABELS), zero_division=0
    )
    for i, label in enumerate(INTENT_LABELS):
        assert per_class[label].precision == pytest.approx(precision[i])
        assert per_class[label].recall == pytest.approx(recall[i])
        assert per_class[label].f1 == pytest.approx(f1[i])
        assert per_class[label].support == support[i]
    macro = np.mean([m.f1 for m in per_class.values()])
    assert macro == pytest.approx(
        metrics.f1_score(
            gold, predicted, labels=list(INTENT_LABELS), average="macro", zero_division=0
        )
    )
    assert np.trace(matrix) / matrix.sum() == pytest.approx(metrics.accuracy_score(gold, predicted))


def test_confusion_rows_are_gold_and_columns_predicted():
    matrix = confusion_matrix(["search", "search"], ["comparison", "search"], INTENT_LABELS)
    search, comparison = INTENT_LABELS.index("search"), INTENT_LABELS.index("comparison")
    assert matrix[search, comparison] == 1
    assert matrix[comparison, search] == 0
    with pytest.raises(ValueError):
        confusion_matrix(["search"], [], INTENT_LABELS)


def test_reliability_bins_and_calibration_error():
    bins = reliability_table(
        [0.1, 0.15, 0.9, 1.0, 0.95], [False, True, True, True, False], n_bins=5
    )
    assert [(b.lower, b.count) for b in bins] == [(0.0, 2), (0.8, 3)]
    assert bins[1].accuracy == pytest.approx(2 / 3)
    expected = (2 * abs(0.5 - 0.125) + 3 * abs(2 / 3 - 0.95)) / 5
    assert expected_calibration_error(bins) == pytest.approx(expected)
    assert expected_calibration_error(()) == 0.0


class _Scripted:
    """Answers from a table; raises for queries it does not know, like a broken model."""

    name = "scripted"

    def __init__(self, answers: dict[str, tuple[Intent, Tier]]):
        self.answers = answers
        self.histories: list[tuple[HistoryMessage, ...]] = []

    async def classify(self, *, query: str, history: Sequence[HistoryMessage]) -> Classification:
        self.histories.append(tuple(history))
        if query not in self.answers:
            raise ClassifierError("unknown")
        intent, tier = self.answers[query]
        await asyncio.sleep(0)
        return Classification(
            intent=intent,
            confidence=0.9,
            tier=tier,
            strategy=STRATEGY_FOR_TIER[tier],
            decomposed_steps=(),
            language=Language.EN,
            reasoning="",
            classifier="trained",
        )


def _example(text: str, intent: Intent, tier: Tier, context: str = "") -> LabelledQuery:
    return LabelledQuery(
        text=text, intent=intent, tier=tier, language=Language.EN, split="test", context=context
    )


@pytest.fixture
def scripted_result():
    classifier = _Scripted(
        {
            "hi": (Intent.CONVERSATIONAL, Tier.T0),
            "PPO vs HMO": (Intent.COMPARISON, Tier.T3),
            "find the policy": (Intent.FACTUAL_QUESTION, Tier.T1),
            "and for contractors?": (Intent.PROCEDURAL, Tier.T1),
        }
    )
    examples = [
        _example("hi", Intent.CONVERSATIONAL, Tier.T0),
        _example("PPO vs HMO", Intent.COMPARISON, Tier.T2),
        _example("find the policy", Intent.SEARCH, Tier.T1),
        _example("and for contractors?", Intent.PROCEDURAL, Tier.T1, context="how do I apply?"),
        _example("crash me", Intent.SEARCH, Tier.T1),
    ]
    result = asyncio.run(router_evaluate(classifier=classifier, examples=examples))
    return classifier, result


def test_router_evaluate_counts_what_it_sees(scripted_result):
    classifier, result = scripted_result
    assert result.examples == 5
    assert result.accuracy == pytest.approx(3 / 5)
    # The broken call became the fallback: factual_question, T1.
    assert result.tier_accuracy == pytest.approx(4 / 5)
    search = INTENT_LABELS.index("search")
    factual = INTENT_LABELS.index("factual_question")
    assert result.confusion[search][factual] == 2
    assert result.per_class["search"].support == 2
    assert result.per_class["search"].recall == 0.0
    assert result.latency_ms_p50 >= 0 and result.latency_ms_p95 >= result.latency_ms_p50
    # A follow-up is classified with the message it follows.
    assert classifier.histories[3] == (HistoryMessage(role="user", text="how do I apply?"),)
    assert classifier.histories[0] == ()


def test_as_json_has_the_agreed_keys(scripted_result):
    _, result = scripted_result
    data = result.as_json()
    assert set(data) == {
        "accuracy",
        "macro_f1",
        "labels",
        "confusion",
        "latency_ms_p50",
        "latency_ms_p95",
        "per_class",
        "tier_accuracy",
        "examples",
    }
    assert data["labels"] == [str(i) for i in Intent]
    assert len(data["confusion"]) == len(Intent)
    assert set(data["per_class"]["search"]) == {"precision", "recall", "f1", "support"}


def test_format_report_shows_the_table_and_the_confusion_matrix(scripted_result):
    _, result = scripted_result
    report = format_report(result)
    assert "accuracy 0.600" in report
    assert "confusion (rows gold, columns predicted)" in report
    for label in INTENT_LABELS:
        assert label in report
    assert "reliability" in report


def test_router_evaluate_needs_examples():
    with pytest.raises(ValueError):
        asyncio.run(router_evaluate(classifier=_Scripted({}), examples=[]))
