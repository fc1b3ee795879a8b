from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import receiver

from apps.answers.signals import turn_finished


@receiver(turn_finished, dispatch_uid="analytics.post_turn")
def post_turn_enqueue(sender: Any, turn_id: int, **kwargs: Any) -> None:
    from apps.analytics.tasks import post_turn_task

    transaction.on_commit(lambda: post_turn_task.enqueue(turn_id))
