"""Latency histograms: which bucket a turn's total time falls in, and percentiles read back.

Percentiles of a range are computed from summed bucket counts, never from every turn, so the
dashboard's p50 and p95 cost the same for a week as for a year. Within a bucket the turns are
assumed evenly spread (linear interpolation); the error is at most the bucket's width, which
grows with the latency (about a third of the bound), as a reader of "p95 = 7.4 s" expects.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

# Upper bounds (ms, inclusive) of every bucket but the last, which holds everything slower.
BUCKET_BOUNDS_MS: tuple[float, ...] = (
    250, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000, 7500,
    10_000, 15_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000,
)  # fmt: skip
BUCKETS = len(BUCKET_BOUNDS_MS) + 1


def latency_bucket(ms: float) -> int:
    """The bucket index of a total time in milliseconds."""
    return bisect.bisect_left(BUCKET_BOUNDS_MS, max(ms, 0.0))


def latency_percentile(counts: Sequence[int], fraction: float) -> float | None:
    """The latency (ms) below which `fraction` of the counted turns fall; None with no turns."""
    total = sum(counts)
    if total == 0:
        return None
    wanted = fraction * total
    seen = 0
    for index, count in enumerate(counts):
        if count and seen + count >= wanted:
            low = BUCKET_BOUNDS_MS[index - 1] if index else 0.0
            if index >= len(BUCKET_BOUNDS_MS):
                return low  # the open bucket: "at least" its lower bound
            return low + (BUCKET_BOUNDS_MS[index] - low) * (wanted - seen) / count
        seen += count
    return BUCKET_BOUNDS_MS[-1]
