"""A stored turn's stage timings read back: the audit page, its CSV and the REST API show them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def timing_number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def stage_timings(
    timings: Mapping[str, Any], *, skip: Sequence[str] = ()
) -> list[tuple[str, float]]:
    """Numeric leaves of a timings dict, nested stages flattened as `outer.inner`."""
    out: list[tuple[str, float]] = []
    for stage, value in timings.items():
        if stage in skip:
            continue
        if isinstance(value, Mapping):
            out.extend((f"{stage}.{inner}", ms) for inner, ms in stage_timings(value))
        elif (ms := timing_number(value)) is not None:
            out.append((str(stage), ms))
    return out
