"""The steps that follow a turn's end, registered by the apps built on answers.

Answers never imports analytics (imports flow analytics -> answers -> corpus), so analytics
registers its steps here when it loads (`AnalyticsConfig.ready`). `turn_end` in services.py
runs them once per turn, after the terminal event is committed. A step only enqueues work
(the task queue runs it), and a failing step is logged: it never touches the stored answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass

from apps.answers.models import TurnStatus
from ragplatform.seams import Seam

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnEnd:
    turn_id: int
    status: TurnStatus  # finished, failed or cancelled


TurnEndStep = Callable[[TurnEnd], None]
_STEPS: dict[str, TurnEndStep] = {}
_seam: Seam[Mapping[str, TurnEndStep]] = Seam(lambda: _STEPS)


def turn_end_step_register(*, name: str, step: TurnEndStep) -> None:
    """Register (or replace, by name) a step; registering twice is harmless."""
    _STEPS[name] = step


def turn_end_steps_run(end: TurnEnd) -> None:
    for name, step in _seam().items():
        try:
            step(end)
        except Exception:
            logger.exception("Turn-end step %s failed for turn %s", name, end.turn_id)


def turn_end_steps_override(
    steps: Mapping[str, TurnEndStep],
) -> AbstractContextManager[Mapping[str, TurnEndStep]]:
    """Run `steps` instead of the registered ones while the block runs (tests)."""
    return _seam.override(steps)
