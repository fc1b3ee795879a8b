"""benchmarks/calibration_fit.py: threshold replay, passage split, equal set weights, the fit."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from apps.answers.composing.confidence import expected_calibration_error
from apps.answers.evaluation.signals import QuestionSignals, signals_write
from benchmarks.calibration_fit import (
    Row,
    blend_fit,
    confidence_value,
    equal_weights,
    group_halves,
    logistic_fit,
    refusal_figures,
    refused_at,
    rows_read,
    sets_load,
    signals_fit_on_top,
    threshold_choose,
)


def row(support: float, *, right: bool = True, answerable: bool = True, **extra: object) -> Row:
    fields: dict[str, object] = {
        "answerable": answerable,
        "refused": False,
        "right": right,
        "support": support,
        "chain": False,
        "cosine": 0.9,
        "agreed": True,
    }
    return Row(**(fields | extra))  # type: ignore[arg-type]


def test_a_threshold_refuses_low_support_but_not_a_complete_chain() -> None:
    assert refused_at(row(0.4), 0.5) and not refused_at(row(0.6), 0.5)
    assert not refused_at(row(0.1, chain=True), 0.5)
    assert refused_at(row(0.9, refused=True), 0.0)  # another rule refused it: stays refused


def test_refusal_figures_count_answerable_and_unanswerable_apart() -> None:
    rows = [row(0.9), row(0.3), row(0.9, right=False), row(0.2, answerable=False, right=False)]
    figures = refusal_figures(rows, 0.5)
    assert figures["false_refusals"] == pytest.approx(1 / 3)
    assert figures["honest_refusals"] == 1.0
    assert figures["gold_cited"] == pytest.approx(1 / 3)
    assert figures["net_right"] == 0.0  # one right, one wrong answer
    assert refusal_figures(rows[:2], 0.5)["honest_refusals"] is None


def test_passages_are_split_alternately_in_natural_order() -> None:
    rows = [row(0.5, group=f"p{i}") for i in (10, 2, 1, 0, 2)]
    fitted, held = group_halves(rows)
    # Sorted p0, p1, p2, p10: p0 and p2 are fitted on, p1 and p10 held out.
    assert sorted(r.group for r in fitted) == ["p0", "p2", "p2"]
    assert sorted(r.group for r in held) == ["p1", "p10"]


def test_every_set_weighs_the_same_whatever_its_size() -> None:
    weights = equal_weights({"big": [0] * 300, "small": [0] * 3})
    assert weights[:300].sum() == pytest.approx(1.0) and weights[300:].sum() == pytest.approx(1.0)


def test_the_threshold_chosen_keeps_a_small_set_from_paying_for_a_big_one() -> None:
    # Refusing below 0.6 turns away the big set's unanswerable questions, but a fifth of the
    # small set's answerable ones.
    big = [row(0.55, answerable=False, right=False)] * 100 + [row(0.8)] * 100
    small = [row(0.55)] * 2 + [row(0.8)] * 8
    pooled = threshold_choose({"all": big + small}, thresholds=(0.5, 0.6))
    apart = threshold_choose({"big": big, "small": small}, thresholds=(0.5, 0.6))
    assert pooled == 0.6 and apart == 0.5
    assert threshold_choose({"small": small}, (0.5, 0.6), max_false_refusals=0.25) == 0.6
    assert threshold_choose({"small": small}, (0.6, 0.7), max_false_refusals=0.1) == 0.6


def test_logistic_fit_recovers_known_coefficients() -> None:
    rng = np.random.default_rng(7)
    x = np.column_stack([np.ones(20000), rng.normal(size=20000)])
    y = (rng.random(20000) < 1 / (1 + np.exp(-(0.5 + 2.0 * x[:, 1])))).astype(float)
    beta = logistic_fit(x, y, np.ones(20000) / 20000, l2=1e-6)
    assert beta == pytest.approx([0.5, 2.0], abs=0.1)


def test_the_fitted_blend_is_calibrated_on_each_set() -> None:
    # Two sets with different support-to-accuracy levels: the fit must serve both.
    random.seed(3)
    sets = {}
    for name, shift in (("a", 0.0), ("b", 0.1)):
        rows = []
        for _ in range(2000):
            support, cosine = random.random(), random.uniform(0.8, 0.95)
            p = 1 / (1 + np.exp(-(8 * (support + shift - 0.5) + 40 * (cosine - 0.87))))
            rows.append(row(support, cosine=cosine, right=random.random() < p))
        sets[name] = rows
    blend = blend_fit(sets, 0.0, keyword_only=0.3)
    for rows in sets.values():
        pairs = [(confidence_value(r, blend), r.right) for r in rows]
        assert expected_calibration_error(pairs) < 0.08
    assert blend.support_weight > 0 and blend.cosine_slope > 0


def test_a_named_signal_that_marks_wrong_answers_gets_a_negative_weight() -> None:
    # Answers whose asked-for kind is missing are right far less often at the same support:
    # the blend must learn to lower their confidence, and only theirs.
    random.seed(5)
    rows = []
    for _ in range(3000):
        support, missing = random.random(), float(random.random() < 0.3)
        p = 1 / (1 + np.exp(-(6 * (support - 0.5) - 2.5 * missing)))
        rows.append(row(support, right=random.random() < p, signals={"kind_missing": missing}))
    blend = blend_fit({"a": rows}, 0.0, keyword_only=0.3, signals=["kind_missing"])
    ((name, weight),) = blend.signal_weights
    assert name == "kind_missing" and -3.5 < weight < -1.5
    with_kind, without = (row(0.7, signals={"kind_missing": v}) for v in (0.0, 1.0))
    assert confidence_value(without, blend) < confidence_value(with_kind, blend)
    on_top = signals_fit_on_top({"a": rows}, 0.0, ["kind_missing"], base=blend)
    # On top of a blend that already weighs the signal, nothing is left to fit.
    assert on_top.support_weight == blend.support_weight
    assert abs(on_top.intercept - blend.intercept) < 0.1
    weight_on_top = dict(on_top.signal_weights)["kind_missing"]
    assert abs(weight_on_top - dict(blend.signal_weights)["kind_missing"]) < 0.1
    plain = blend_fit({"a": rows}, 0.0, keyword_only=0.3)
    assert plain.signal_weights == () and confidence_value(without, plain) == confidence_value(
        with_kind, plain
    )


def test_signal_files_round_trip_and_a_passage_set_is_split(tmp_path: Path) -> None:
    def line(query_id: str, group: str) -> QuestionSignals:
        return QuestionSignals(
            set="persianqa",
            query_id=query_id,
            group=group,
            answerable=True,
            refused=False,
            refusal_reason="",
            right=True,
            support=None,
            support_source="chain-evidence",
            cosine=None,
            agreed=False,
            confidence=0.5,
            answerability={"evidence": 0.4, "negated": 1.0},
        )

    path = tmp_path / "signals.jsonl"
    signals_write(path, [line("1", "p0"), line("2", "p1")])
    rows = rows_read(path)
    assert [(r.support, r.chain, r.cosine) for r in rows] == [(0.0, True, None)] * 2
    assert rows[0].signals == {"evidence": 0.4, "negated": 1.0}
    fitted, held = sets_load([f"pqa={path}"], split_groups=True)
    assert [r.group for r in fitted["pqa"]] == ["p0"]
    assert [r.group for r in held["pqa held-out half"]] == ["p1"]
    assert len(held["pqa whole"]) == 2


def test_the_contained_label_rates_the_answer_shown_and_skips_lines_without_answers(
    tmp_path: Path,
) -> None:
    def line(query_id: str, *, right: bool, contained: bool | None) -> QuestionSignals:
        return QuestionSignals(
            set="s", query_id=query_id, group="", answerable=True, refused=False,
            refusal_reason="", right=right, support=0.6, support_source="evidence-coverage",
            cosine=0.9, agreed=True, confidence=0.7, answerability={}, contained=contained,
        )  # fmt: skip

    path = tmp_path / "signals.jsonl"
    lines = [line("cited", right=True, contained=False), line("both", right=True, contained=True)]
    signals_write(path, [*lines, line("no answers", right=True, contained=None)])
    assert [r.right for r in rows_read(path)] == [True, True, True]
    assert [r.right for r in rows_read(path, label="contained")] == [False, True]
