"""Task workers saying they are alive: one heartbeat row per `manage.py worker` process.

The worker renews its row every RAG_WORKER_HEARTBEAT_S and deletes it when it stops cleanly;
a row that stops moving belongs to a worker that died. The admin reads `worker_last_seen` to
warn that documents wait while no worker runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from ragplatform.models import WorkerHeartbeat

# Rows of workers gone this long are dropped; until then they tell when a worker last ran.
FORGET_AFTER = timedelta(days=7)


@dataclass(frozen=True)
class WorkerIdentity:
    worker_id: str
    host: str
    pid: int
    started_at: datetime


def worker_beat(*, identity: WorkerIdentity, current_task: str) -> None:
    """Create or renew this worker's row."""
    WorkerHeartbeat.objects.update_or_create(
        worker_id=identity.worker_id,
        defaults={
            "host": identity.host[:255],
            "pid": identity.pid,
            "started_at": identity.started_at,
            "last_seen_at": timezone.now(),
            "current_task": current_task[:300],
        },
    )


def worker_forget(*, worker_id: str) -> None:
    WorkerHeartbeat.objects.filter(worker_id=worker_id).delete()


def workers_prune() -> int:
    """Drop the rows of workers not seen for a long time; returns how many."""
    cutoff = timezone.now() - FORGET_AFTER
    deleted, _ = WorkerHeartbeat.objects.filter(last_seen_at__lt=cutoff).delete()
    return deleted


def worker_last_seen() -> datetime | None:
    """The most recent heartbeat of any worker (None: no worker was ever seen)."""
    latest = WorkerHeartbeat.objects.order_by("-last_seen_at").values_list(
        "last_seen_at", flat=True
    )
    return latest.first()


def worker_alive(*, last_seen: datetime | None) -> bool:
    """Whether a heartbeat this recent means some worker is running."""
    stale = timedelta(seconds=settings.RAG_WORKER_STALE_S)
    return last_seen is not None and timezone.now() - last_seen <= stale
