"""Background work, run by `python manage.py worker`; its dotted paths are stored in the queue."""

from __future__ import annotations

import logging

from django_tasks import task

from apps.sources.sync.leases import SyncBusy, SyncLost
from apps.sources.sync.run import source_sync

logger = logging.getLogger(__name__)


@task()
def source_sync_task(source_id: int) -> None:
    try:
        source_sync(source_id=source_id)
    except (SyncBusy, SyncLost) as exc:
        logger.info("Source %s not synced: %s", source_id, exc)
