"""Fit the confidence blend and the refusal threshold on several sets at once.

Reads the per-question signals that `evaluate_answers --min-evidence 0 --signals FILE.jsonl`
writes (at threshold 0 every answer is kept, so any threshold can be replayed exactly: a
question is refused at t when another rule refused it anyway, or when its support is below t,
unless a complete multi-hop chain gave that support). Each set counts equally, whatever its
size, and no term is particular to a set: what is fitted must carry over to a collection that
nobody labelled. A set whose questions name their passage (PersianQA) is split by passage: the
questions of every other passage (in sorted order) are fitted on, the rest are held out.

Prints, for every candidate threshold, each set's false refusals (answerable questions
refused), honest refusals (unanswerable ones refused), gold passage cited and net right
answers (right minus wrong answers, per question); the threshold chosen (the highest at which
no fitting set refuses more than --max-false-refusals of its answerable questions: refusing
the unsupported as far as the set that loses most answers allows); then, at that threshold, the blend fitted in two steps (retrieval
quality from the top cosine and the legs' agreement, then the blend of support and quality,
both logistic regressions) and each set's calibration error, for the fit and for the blend
the platform ships now.

    python benchmarks/calibration_fit.py \\
        --fit scifact_train=S1.jsonl persianqa=P.jsonl parsinlu_train=R1.jsonl multihop=M.jsonl \\
        --report scifact_test=S2.jsonl parsinlu_dev=R2.jsonl multihop_simple=M2.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from apps.answers.composing.answerability import (  # noqa: E402
    ANSWERABILITY_MODEL,
    AnswerabilityModel,
    answerability_score,
)
from apps.answers.composing.confidence import (  # noqa: E402
    BLEND,
    Blend,
    RetrievalFeatures,
    confidence_blend,
    expected_calibration_error,
    quality_of,
)

THRESHOLDS = tuple(round(0.30 + 0.01 * i, 2) for i in range(41))  # 0.30 ... 0.70
SCORE_THRESHOLDS = tuple(
    round(0.005 * i, 3) for i in range(1, 200)
)  # a probability: 0.005 ... 0.995
HELD_OUT = "held-out half"
# logit(0) and logit(1) are infinite; confidence.py clamps retrieval quality the same way.
EPSILON = 1e-4


@dataclass(frozen=True)
class Row:
    answerable: bool
    refused: bool  # by a rule other than the evidence threshold (the run used threshold 0)
    right: bool
    support: float
    chain: bool  # the support came from a complete multi-hop chain
    cosine: float | None
    agreed: bool
    group: str = ""
    # The composer's answerability signals, by name, and the score a refusal rule reads:
    # the support itself unless a rule over the signals was applied (with_scores).
    signals: Mapping[str, float] = field(default_factory=dict)
    score: float | None = None

    @property
    def refusal_score(self) -> float:
        return self.support if self.score is None else self.score


Sets = Mapping[str, Sequence[Row]]


def rows_read(path: Path, *, label: str = "right") -> list[Row]:
    """`label` "contained": a row is right when its answer holds an answer string (lines
    without one are left out); "right": as the set's evaluation scored it."""
    from apps.answers.composing.extractive import CHAIN_SUPPORT_SOURCE

    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            if label == "contained" and data.get("contained") is None:
                continue
            right = data["contained"] if label == "contained" else data["right"]
            rows.append(
                Row(
                    answerable=bool(data["answerable"]),
                    refused=bool(data["refused"]),
                    right=bool(right),
                    support=float(data["support"] or 0.0),
                    chain=data["support_source"] == CHAIN_SUPPORT_SOURCE,
                    cosine=data["cosine"],
                    agreed=bool(data["agreed"]),
                    group=str(data.get("group") or ""),
                    signals=dict(data.get("answerability") or {}),
                )
            )
    return rows


def group_halves(rows: Sequence[Row]) -> tuple[list[Row], list[Row]]:
    """(fitted, held out): the questions of every other passage, passages in sorted order."""
    groups = sorted({r.group for r in rows}, key=_natural)
    fitted = set(groups[::2])
    return [r for r in rows if r.group in fitted], [r for r in rows if r.group not in fitted]


def _natural(text: str) -> tuple[str, int]:
    head = text.rstrip("0123456789")
    tail = text[len(head) :]
    return (head, int(tail) if tail else -1)


def refused_at(row: Row, threshold: float) -> bool:
    return row.refused or (not row.chain and row.refusal_score < threshold)


def refusal_figures(rows: Sequence[Row], threshold: float) -> dict[str, float | None]:
    answerable = [r for r in rows if r.answerable]
    unanswerable = [r for r in rows if not r.answerable]
    answered = [r for r in rows if not refused_at(r, threshold)]
    return {
        "false_refusals": _share([refused_at(r, threshold) for r in answerable]),
        "honest_refusals": _share([refused_at(r, threshold) for r in unanswerable]),
        "gold_cited": _share([r.right and not refused_at(r, threshold) for r in answerable]),
        "net_right": (sum(1 if r.right else -1 for r in answered) / len(rows)) if rows else None,
    }


def _share(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def threshold_choose(
    sets: Sets, thresholds: Sequence[float] = THRESHOLDS, max_false_refusals: float = 0.12
) -> float:
    """The highest threshold at which no set refuses more than `max_false_refusals` of its
    answerable questions: as many unsupported questions refused as the set that loses most
    answers allows (the lowest threshold when none does)."""

    def worst(threshold: float) -> float:
        return max(
            refusal_figures(rows, threshold)["false_refusals"] or 0.0 for rows in sets.values()
        )

    allowed = [t for t in thresholds if worst(t) <= max_false_refusals]
    return max(allowed, default=min(thresholds))


def logistic_fit(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    l2: float = 1e-3,
    offset: np.ndarray | None = None,
) -> np.ndarray:
    """Weighted logistic regression by Newton's method; x's first column is ones (the
    intercept). The other columns are standardised while fitting, so that the light penalty
    (which keeps separable data finite) weighs on every feature alike, whatever its spread.
    `offset`: a fixed logit each row starts from (a blend already fitted), the fit adding to it."""
    mean, std = x[:, 1:].mean(axis=0), x[:, 1:].std(axis=0)
    std[std == 0] = 1.0
    z = np.column_stack([x[:, 0], (x[:, 1:] - mean) / std])
    start = np.zeros(len(y)) if offset is None else offset
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(start + z @ beta)))
        gradient = z.T @ (weights * (y - p)) - l2 * beta
        hessian = (z * (weights * p * (1 - p))[:, None]).T @ z + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-9:
            break
    slopes = beta[1:] / std
    return np.concatenate([[beta[0] - float(slopes @ mean)], slopes])


def equal_weights(sets: Mapping[str, Sequence[object]]) -> np.ndarray:
    """Each set's rows weigh 1 / its size: every set counts as much as any other."""
    return np.concatenate([np.full(len(rows), 1.0 / len(rows)) for rows in sets.values() if rows])


def blend_fit(
    sets: Sets,
    threshold: float,
    keyword_only: float = BLEND.keyword_only_quality,
    signals: Sequence[str] = (),
) -> Blend:
    """The two steps; `signals` names the answer signals the second step also weighs."""
    answered = {
        name: [r for r in rows if not refused_at(r, threshold)] for name, rows in sets.items()
    }
    dense = {name: [r for r in rows if r.cosine is not None] for name, rows in answered.items()}
    rows = [r for group in dense.values() for r in group]
    x = np.array([[1.0, r.cosine or 0.0, float(r.agreed)] for r in rows])
    b0, slope, bonus = logistic_fit(x, _labels(rows), equal_weights(dense))
    quality = Blend(slope, -b0 / slope, bonus, keyword_only, 0.0, 0.0, 1.0)  # the first step
    rows = [r for group in answered.values() for r in group]
    x = np.array(
        [
            [1.0, r.support, _logit(quality_value(r, quality))]
            + [r.signals.get(name, 0.0) for name in signals]
            for r in rows
        ]
    )
    intercept, support_weight, retrieval_weight, *weights = logistic_fit(
        x, _labels(rows), equal_weights(answered)
    )
    return Blend(
        slope,
        -b0 / slope,
        bonus,
        keyword_only,
        intercept,
        support_weight,
        retrieval_weight,
        tuple((name, round(float(w), 3)) for name, w in zip(signals, weights, strict=True)),
    )


def signals_fit_on_top(
    sets: Sets, threshold: float, signals: Sequence[str], base: Blend = BLEND
) -> Blend:
    """The shipped blend kept as it is (fitted on sets not measured again), with the named
    signals' weights and an intercept shift fitted on top of its logit, on these sets."""
    answered = {
        name: [r for r in rows if not refused_at(r, threshold)] for name, rows in sets.items()
    }
    rows = [r for group in answered.values() for r in group]
    offset = np.array([_logit(confidence_value(r, base)) for r in rows])
    x = np.array([[1.0] + [r.signals.get(name, 0.0) for name in signals] for r in rows])
    shift, *weights = logistic_fit(x, _labels(rows), equal_weights(answered), offset=offset)
    named = dict(base.signal_weights)  # a signal the base already weighs: the fit adds to it
    for name, weight in zip(signals, weights, strict=True):
        named[name] = round(named.get(name, 0.0) + float(weight), 3)
    return dataclasses.replace(
        base, intercept=round(base.intercept + float(shift), 3), signal_weights=tuple(named.items())
    )


def _labels(rows: Sequence[Row]) -> np.ndarray:
    return np.array([1.0 if r.right else 0.0 for r in rows])


def quality_value(row: Row, blend: Blend) -> float:
    return quality_of(RetrievalFeatures(row.cosine, row.agreed), blend)


def confidence_value(row: Row, blend: Blend = BLEND) -> float:
    """The blend as confidence.py computes it, with these coefficients."""
    return confidence_blend(
        support=row.support, retrieval=quality_value(row, blend), signals=row.signals, blend=blend
    )


def _logit(p: float) -> float:
    p = min(1.0 - EPSILON, max(EPSILON, p))
    return float(np.log(p / (1.0 - p)))


def calibration_error(
    rows: Sequence[Row], threshold: float, confidence: Callable[[Row], float]
) -> float:
    answered = [r for r in rows if not refused_at(r, threshold)]
    return expected_calibration_error([(confidence(r), r.right) for r in answered])


def answerability_scored(
    sets: Sets, model: AnswerabilityModel = ANSWERABILITY_MODEL
) -> dict[str, list[Row]]:
    """The sets with each row's refusal score the answerability model's (answerability.py)."""
    return {
        name: [dataclasses.replace(r, score=answerability_score(r.signals, model)) for r in rows]
        for name, rows in sets.items()
    }


def shipped_confidence(row: Row) -> float:
    """The blend in confidence.py, on the features the row records."""
    return confidence_value(row, BLEND)


def sets_load(
    specs: Sequence[str], *, split_groups: bool, label: str = "right"
) -> tuple[dict[str, list[Row]], dict[str, list[Row]]]:
    """NAME=FILE specs -> (fitted sets, held-out sets); a set with passages is split in two."""
    fitted: dict[str, list[Row]] = {}
    held: dict[str, list[Row]] = {}
    for spec in specs:
        name, _, path = spec.partition("=")
        if not path:
            raise SystemExit(f"expected NAME=FILE, got {spec!r}")
        rows = rows_read(Path(path), label=label)
        if split_groups and any(r.group for r in rows):
            fitted[name], held[f"{name} {HELD_OUT}"] = group_halves(rows)
            held[f"{name} whole"] = rows
        else:
            fitted[name] = rows
    return fitted, held


def figures_line(name: str, rows: Sequence[Row], threshold: float) -> str:
    figures = refusal_figures(rows, threshold)
    shown = " ".join(
        f"{key} {'-' if value is None else f'{value:.3f}'}" for key, value in figures.items()
    )
    return f"  {name:<28} n {len(rows):>4}  {shown}"


def _print_curve(sets: Sets, thresholds: Sequence[float]) -> None:
    print("threshold trade-off (false refusals / honest refusals / gold cited / net right):")
    for threshold in thresholds:
        print(f"t = {threshold:.2f}")
        for name, rows in sets.items():
            print(figures_line(name, rows, threshold))


def _print_calibration(sets: Sets, threshold: float, blend: Blend) -> None:
    print(f"at threshold {threshold:.2f}: calibration error (ECE, 10 bins) fitted / shipped")
    for name, rows in sets.items():
        fitted = calibration_error(rows, threshold, lambda r: confidence_value(r, blend))
        shipped = calibration_error(rows, threshold, shipped_confidence)
        print(f"{figures_line(name, rows, threshold)}  ece {fitted:.3f} / {shipped:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", required=True, help="NAME=FILE, fitted on")
    parser.add_argument("--report", nargs="*", default=[], help="NAME=FILE, reported only")
    parser.add_argument("--threshold", type=float, default=None, help="instead of the chosen one")
    parser.add_argument(
        "--max-false-refusals",
        type=float,
        default=0.12,
        help="the most any fitting set may refuse of its answerable questions",
    )
    parser.add_argument(
        "--signal",
        action="append",
        default=[],
        help="an answer signal the blend also weighs (repeatable): e.g. unsupported_share",
    )
    parser.add_argument(
        "--label",
        choices=("right", "contained"),
        default="right",
        help="what a right answer is: as each set scored it (a gold passage cited, for the "
        "public sets), or that the answer holds one of the question's answer strings",
    )
    parser.add_argument(
        "--on-top",
        action="store_true",
        help="keep the shipped blend and fit only the --signal weights and an intercept shift",
    )
    parser.add_argument("--curve-step", type=int, default=2, help="print every n-th threshold")
    parser.add_argument(
        "--refuse-on",
        choices=("evidence", "answerability"),
        default="evidence",
        help="the score the threshold reads: the evidence, or the shipped answerability model's",
    )
    args = parser.parse_args()
    fitted, held = sets_load(args.fit, split_groups=True, label=args.label)
    reported, _ = sets_load(args.report, split_groups=False, label=args.label)
    thresholds = THRESHOLDS
    if args.refuse_on == "answerability":
        fitted, held, reported = (answerability_scored(s) for s in (fitted, held, reported))
        thresholds = SCORE_THRESHOLDS
    every = {**fitted, **held, **reported}
    _print_curve(every, thresholds[:: args.curve_step])
    threshold = (
        args.threshold
        if args.threshold is not None
        else threshold_choose(fitted, thresholds, max_false_refusals=args.max_false_refusals)
    )
    blend = (
        signals_fit_on_top(fitted, threshold, args.signal)
        if args.on_top
        else blend_fit(fitted, threshold, signals=args.signal)
    )
    print(f"chosen threshold {threshold:.2f}; blend {blend}")
    _print_calibration(every, threshold, blend)


if __name__ == "__main__":
    main()
