"""Fit the extractive composer's answerability model and its refusal threshold on several sets.

Reads the signal files `evaluate_answers --min-evidence 0 --min-answerability 0 --signals F`
writes: each line holds the composer's answerability signals (answerability.py). A logistic
regression for "the question is answerable" is fitted over them on every fitting set at once,
each set counting equally and no term particular to a set. Only PersianQA has unanswerable
questions; the other sets have answerable ones only and so teach the model what it must not
refuse. PersianQA is split by passage (calibration_fit.group_halves): one half is fitted on,
the other held out. The threshold follows the evidence threshold's rule: the highest at which
no fitting set refuses more than --max-false-refusals of its answerable questions (other rules'
refusals, such as the quantity check, count as they happened). Prints the model, the
threshold, the trade-off around it and every set's figures, beside the evidence rule's.

    python benchmarks/answerability_fit.py \\
        --fit persianqa=P.jsonl parsinlu_train=R1.jsonl multihop=M.jsonl scifact_train=S1.jsonl \\
        --report parsinlu_dev=R2.jsonl scifact_test=S2.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from apps.answers.composing.answerability import (  # noqa: E402
    ANSWERABILITY_MODEL,
    SIGNAL_NAMES,
    AnswerabilityModel,
)
from benchmarks.calibration_fit import (  # noqa: E402
    SCORE_THRESHOLDS,
    THRESHOLDS,
    Row,
    Sets,
    answerability_scored,
    equal_weights,
    figures_line,
    logistic_fit,
    sets_load,
    threshold_choose,
)

# Every signal but asks_quantity: a question that asks for a number is refused by its own rule
# when no number is stated; weighing the bare question type again would only learn how often
# one set's questions of that type happen to be unanswerable.
MODEL_SIGNALS = tuple(name for name in SIGNAL_NAMES if name != "asks_quantity")


def model_fit(
    sets: Sets, *, names: Sequence[str] = MODEL_SIGNALS, label: str = "answerable"
) -> AnswerabilityModel:
    """A weighted logistic regression over the named signals (each set weighs the same)."""
    usable = {name: [r for r in rows if r.signals] for name, rows in sets.items()}
    rows = [r for group in usable.values() for r in group]
    x = np.array([[1.0, *(r.signals.get(n, 0.0) for n in names)] for r in rows])
    y = np.array([1.0 if getattr(r, label) else 0.0 for r in rows])
    beta = logistic_fit(x, y, equal_weights(usable))
    weights = tuple((n, round(float(w), 3)) for n, w in zip(names, beta[1:], strict=True))
    return AnswerabilityModel(intercept=round(float(beta[0]), 3), weights=weights)


def _report(title: str, sets: Sets, threshold: float) -> None:
    print(f"{title}: threshold {threshold:.3f}")
    for name, rows in sets.items():
        print(figures_line(name, rows, threshold))


def _curve(sets: Sets, thresholds: Sequence[float]) -> None:
    for threshold in thresholds:
        _report("  at", sets, threshold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", required=True, help="NAME=FILE, fitted on")
    parser.add_argument("--report", nargs="*", default=[], help="NAME=FILE, reported only")
    parser.add_argument("--max-false-refusals", type=float, default=0.12)
    parser.add_argument("--signals", nargs="*", default=list(MODEL_SIGNALS), choices=SIGNAL_NAMES)
    parser.add_argument("--label", choices=("answerable", "right"), default="answerable")
    parser.add_argument("--shipped", action="store_true", help="the shipped model, not a fit")
    args = parser.parse_args()
    fitted, held = sets_load(args.fit, split_groups=True)
    reported, _ = sets_load(args.report, split_groups=False)
    every: Mapping[str, Sequence[Row]] = {**fitted, **held, **reported}
    evidence_threshold = threshold_choose(fitted, THRESHOLDS, args.max_false_refusals)
    _report("evidence rule", every, evidence_threshold)
    model = (
        ANSWERABILITY_MODEL
        if args.shipped
        else model_fit(fitted, names=args.signals, label=args.label)
    )
    print(f"model {model}")
    rescored = answerability_scored(every, model)
    chosen = threshold_choose(
        {name: rescored[name] for name in fitted}, SCORE_THRESHOLDS, args.max_false_refusals
    )
    _report("answerability rule", rescored, chosen)
    index = SCORE_THRESHOLDS.index(chosen)
    _curve(rescored, SCORE_THRESHOLDS[max(0, index - 6) : index + 7 : 2])


if __name__ == "__main__":
    main()
