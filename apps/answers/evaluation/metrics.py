"""Ranking metrics as trec_eval / BEIR compute them (linear gains, log2 discount), and the share
of true values every evaluation summary reports."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeVar

_Empty = TypeVar("_Empty", float, None)


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    gains = [relevant.get(doc, 0) for doc in ranked[:k]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 100) -> float:
    wanted = {doc for doc, grade in relevant.items() if grade > 0}
    return len(wanted.intersection(ranked[:k])) / len(wanted) if wanted else 0.0


def mrr_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if relevant.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sample."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def share(values: Sequence[bool], *, empty: _Empty) -> float | _Empty:
    """The share of true values, to four places; `empty` when there are none to count."""
    return round(sum(values) / len(values), 4) if values else empty
