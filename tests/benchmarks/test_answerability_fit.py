"""benchmarks/answerability_fit.py: the model learns what tells unanswerable questions apart."""

from __future__ import annotations

import random

import pytest

from apps.answers.composing.answerability import AnswerabilityModel, answerability_score
from benchmarks.answerability_fit import model_fit
from benchmarks.calibration_fit import (
    SCORE_THRESHOLDS,
    Row,
    answerability_scored,
    refusal_figures,
    threshold_choose,
)


def row(*, answerable: bool, negated: float, evidence: float) -> Row:
    return Row(
        answerable=answerable,
        refused=False,
        right=answerable,
        support=evidence,
        chain=False,
        cosine=0.9,
        agreed=True,
        signals={"evidence": evidence, "negated": negated},
    )


def test_the_model_learns_the_signal_that_marks_unanswerable_questions() -> None:
    random.seed(5)
    # A set with unanswerable questions, negated far more often, and one with answerable ones
    # only, where it is rarer: the fit weighs both.
    mixed = [
        row(answerable=a, negated=float(random.random() < (0.7 if not a else 0.1)), evidence=e)
        for a, e in ((random.random() < 0.7, random.random()) for _ in range(2000))
    ]
    answerable_only = [
        row(answerable=True, negated=float(random.random() < 0.05), evidence=random.random())
        for _ in range(500)
    ]
    model = model_fit({"mixed": mixed, "plain": answerable_only}, names=("evidence", "negated"))
    weights = dict(model.weights)
    assert weights["negated"] < -1.0 and abs(weights["evidence"]) < 0.5
    sets = answerability_scored({"mixed": mixed, "plain": answerable_only}, model)
    threshold = threshold_choose(sets, SCORE_THRESHOLDS, max_false_refusals=0.12)
    for rows in sets.values():
        assert (refusal_figures(rows, threshold)["false_refusals"] or 0.0) <= 0.12
    assert (refusal_figures(sets["mixed"], threshold)["honest_refusals"] or 0.0) > 0.5


def test_rescoring_reads_each_rows_signals() -> None:
    model = AnswerabilityModel(intercept=0.0, weights=(("negated", -4.0),))
    rows = [row(answerable=True, negated=n, evidence=0.9) for n in (0.0, 1.0)]
    scored = answerability_scored({"s": rows}, model)["s"]
    assert [r.refusal_score for r in scored] == [
        pytest.approx(0.5),
        pytest.approx(answerability_score({"negated": 1.0}, model)),
    ]
    assert rows[0].refusal_score == 0.9  # unscored: the support
