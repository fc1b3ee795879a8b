"""Post-turn work runs in a task worker (`manage.py worker`), so the answer never waits for it.

`turn_end_enqueue` is the step analytics registers with answers (`AnalyticsConfig.ready`); the
turn's end calls it once, after the terminal event is committed.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django_tasks import task

from apps.analytics.services import daily_counts_refresh_for_turn, post_turn_run
from apps.answers.models import TurnFeedback, TurnStatus
from apps.answers.providers.configured import chat_model_configured
from apps.answers.turn.end_steps import TurnEnd
from apps.corpus.search.embedders import default_embedder

logger = logging.getLogger(__name__)


@task()
def post_turn_task(turn_id: int) -> None:
    try:
        post_turn_run(turn_id=turn_id, embedder=default_embedder(), chat=chat_model_configured())
    except Exception:
        # Loud, and contained: the answer is already stored and must stay untouched.
        logger.exception("Post-turn step failed for turn %s", turn_id)
        return
    # The day's category counts include what was just decided for this turn.
    daily_counts_task.enqueue(turn_id)


@task()
def daily_counts_task(turn_id: int) -> None:
    """Apart from post_turn_task so a slow or failing classifier never holds back the counts."""
    try:
        daily_counts_refresh_for_turn(turn_id=turn_id)
    except Exception:
        # The counts can be rebuilt (`manage.py analytics_refresh`); the answer must stay as it is.
        logger.exception("Refreshing the daily counts failed for turn %s", turn_id)


def turn_end_enqueue(end: TurnEnd) -> None:
    """Every end is counted (failed and cancelled turns too); only a finished turn is titled
    and categorised."""
    daily_counts_task.enqueue(end.turn_id)
    if end.status == TurnStatus.FINISHED:
        post_turn_task.enqueue(end.turn_id)


def feedback_changed(sender: type[TurnFeedback], instance: TurnFeedback, **kwargs: Any) -> None:
    """A rating given, changed or withdrawn (days later, perhaps) moves its turn's day counts."""
    turn_id = instance.turn_id
    transaction.on_commit(lambda: daily_counts_task.enqueue(turn_id))
