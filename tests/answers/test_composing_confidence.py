"""Confidence blending, bands, the retrieval-quality mapping and expected calibration error."""

from __future__ import annotations

import math

import pytest

from apps.answers.composing import (
    confidence_band,
    confidence_blend,
    expected_calibration_error,
    retrieval_quality,
)
from apps.answers.composing.confidence import BLEND, RetrievalFeatures, quality_of
from apps.answers.retrieval.types import Candidate, RetrievedChunk


def retrieved(candidate: Candidate) -> RetrievedChunk:
    return RetrievedChunk(
        chunk_id=candidate.chunk_id,
        document_id=1,
        title="Doc",
        filename="doc.md",
        heading="",
        page=None,
        text="text",
        token_count=1,
        language="en",
        score=candidate.fused_score,
        candidate=candidate,
    )


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (1.0, "green"),
        (0.75, "green"),
        (0.7499, "yellow"),
        (0.4, "yellow"),
        (0.3999, "red"),
        (0.0, "red"),
    ],
)
def test_band_boundaries(value: float, band: str) -> None:
    assert confidence_band(value) == band


def test_blend_rises_with_support_and_with_retrieval_quality() -> None:
    grid = [i / 10 for i in range(11)]
    by_support = [confidence_blend(support=s, retrieval=0.5) for s in grid]
    by_quality = [confidence_blend(support=0.5, retrieval=q) for q in grid]
    assert by_support == sorted(by_support) and by_support[0] < by_support[-1]
    assert by_quality == sorted(by_quality) and by_quality[0] < by_quality[-1]
    # Support carries more than retrieval: strong evidence from a middling retrieval is
    # worth more than weak evidence from an excellent one.
    assert confidence_blend(support=0.9, retrieval=0.5) > confidence_blend(
        support=0.3, retrieval=0.95
    )


def test_blend_is_the_fitted_logistic() -> None:
    logit = BLEND.intercept + BLEND.support_weight * 0.6 + BLEND.retrieval_weight * math.log(4)
    assert confidence_blend(support=0.6, retrieval=0.8) == pytest.approx(1 / (1 + math.exp(-logit)))


def test_blend_stays_in_range_and_treats_nan_as_no_confidence() -> None:
    top = confidence_blend(support=1.0, retrieval=1.0)
    assert confidence_blend(support=1.7, retrieval=1.2) == top < 1.0
    bottom = confidence_blend(support=0.0, retrieval=0.0)
    assert confidence_blend(support=-1.0, retrieval=-0.5) == bottom > 0.0
    assert confidence_blend(support=math.nan, retrieval=0.9) == confidence_blend(
        support=0.0, retrieval=0.9
    )
    assert confidence_blend(support=0.5, retrieval=math.nan) == confidence_blend(
        support=0.5, retrieval=0.0
    )


def test_retrieval_quality_follows_the_top_cosine_and_leg_agreement() -> None:
    def quality(cosine: float, *, agreed: bool) -> float:
        keyword_rank = 1 if agreed else None
        candidate = Candidate(1, dense_rank=1, dense_score=cosine, keyword_rank=keyword_rank)
        return retrieval_quality([retrieved(candidate)])

    assert quality(BLEND.cosine_midpoint, agreed=False) == pytest.approx(0.5)
    assert quality(BLEND.cosine_midpoint - 0.15, agreed=False) < 0.15
    assert quality(BLEND.cosine_midpoint + 0.15, agreed=False) > 0.85
    assert quality(0.88, agreed=True) > quality(0.88, agreed=False)
    values = [quality(c / 100, agreed=True) for c in range(70, 100)]
    assert values == sorted(values)
    assert all(0.0 <= v <= 1.0 for v in values)


def test_retrieval_quality_uses_the_best_of_the_top_three() -> None:
    weak_first = [
        retrieved(Candidate(1, keyword_rank=1)),
        retrieved(Candidate(2, dense_rank=1, dense_score=0.93)),
        retrieved(Candidate(3, dense_rank=2, dense_score=0.80)),
    ]
    # The keyword-only first chunk does not hide the dense 0.93 behind it.
    assert retrieval_quality(weak_first) == quality_of(RetrievalFeatures(0.93, agreed=False))
    assert retrieval_quality(weak_first) > retrieval_quality(weak_first[:1])


def test_retrieval_quality_without_dense_scores_or_chunks() -> None:
    assert retrieval_quality([]) == 0.0
    assert (
        retrieval_quality([retrieved(Candidate(1, keyword_rank=1))]) == BLEND.keyword_only_quality
    )


def test_ece_on_a_hand_computed_case() -> None:
    pairs = [(0.9, True), (0.9, True), (0.9, False), (0.1, False), (0.1, True)]
    # bin 9: confidence 0.9, accuracy 2/3 -> gap 0.2333 x 3; bin 1: 0.1 vs 0.5 -> 0.4 x 2
    assert expected_calibration_error(pairs) == pytest.approx((0.7 + 0.8) / 5)


def test_ece_is_zero_when_calibrated_and_puts_one_in_the_last_bin() -> None:
    assert expected_calibration_error([(1.0, True), (0.0, False)]) == 0.0
    assert expected_calibration_error([(0.25, True), (0.25, False)], bins=2) == pytest.approx(0.25)
    assert expected_calibration_error([]) == 0.0


def test_ece_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="bins"):
        expected_calibration_error([(0.5, True)], bins=0)
    with pytest.raises(ValueError, match="confidence"):
        expected_calibration_error([(1.5, True)])
