from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import receiver

from apps.answers.signals import turn_ended, turn_finished


@receiver(turn_finished, dispatch_uid="analytics.post_turn")
def post_turn_enqueue(sender: Any, turn_id: int, **kwargs: Any) -> None:
    from apps.analytics.tasks import post_turn_task

    transaction.on_commit(lambda: post_turn_task.enqueue(turn_id))


@receiver(turn_ended, dispatch_uid="analytics.daily_counts")
def daily_counts_enqueue(sender: Any, turn_id: int, **kwargs: Any) -> None:
    # Every end counts (failed and cancelled turns too), so not on `turn_finished`.
    from apps.analytics.tasks import daily_counts_task

    transaction.on_commit(lambda: daily_counts_task.enqueue(turn_id))
