"""Jobs that must run every few seconds somewhere in the deployment (sweepers, heartbeats).

Apps register their jobs in `AppConfig.ready()`; the task worker runs every registered job on
its interval. Several workers may run the same job at the same time, so a job must be safe to
run concurrently (claim rows with `select_for_update(skip_locked=True)` or a conditional
UPDATE) and cheap when there is nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    every_s: Callable[[], float]  # read at each run, so a setting override takes effect
    run: Callable[[], object]


_jobs: dict[str, PeriodicJob] = {}


def periodic_register(
    *, name: str, every_s: Callable[[], float], run: Callable[[], object]
) -> None:
    """Register (or replace, for code reloads) the job called `name`."""
    _jobs[name] = PeriodicJob(name=name, every_s=every_s, run=run)


def periodic_jobs() -> tuple[PeriodicJob, ...]:
    return tuple(_jobs.values())
