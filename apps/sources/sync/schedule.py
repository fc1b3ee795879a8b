"""The periodic job: queue the sources that are due, and resume syncs whose process died.

Each source is moved to `queued` by one conditional UPDATE, so of several workers running the
job at once only one queues it.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from django.db import transaction
from django.db.models import DurationField, ExpressionWrapper, F, Q, Value
from django.db.models.functions import Now

from apps.sources.models import Source, SyncStatus
from ragplatform.leases import lease_lapsed


def _due() -> Q:
    every = ExpressionWrapper(
        F("every_minutes") * Value(timedelta(minutes=1)), output_field=DurationField()
    )
    ended_long_ago = Q(sync_ended_at__isnull=True) | Q(sync_ended_at__lte=Now() - every)
    idle = Q(status__in=[SyncStatus.NEVER, SyncStatus.OK, SyncStatus.FAILED])
    return Q(paused=False, every_minutes__isnull=False) & idle & ended_long_ago


def sources_due_enqueue() -> int:
    """Queue every due source and every sync left running under a lapsed lease."""
    from apps.sources.tasks import source_sync_task

    lapsed = Q(status=SyncStatus.RUNNING) & lease_lapsed()
    queued = 0
    for source_id in Source.objects.filter(_due() | lapsed).values_list("pk", flat=True):
        with transaction.atomic():
            claimed = (
                Source.objects.filter(pk=source_id)
                .filter(_due() | lapsed)
                .update(status=SyncStatus.QUEUED)
            )
            if claimed:
                queued += 1
                transaction.on_commit(partial(source_sync_task.enqueue, source_id))
    return queued
