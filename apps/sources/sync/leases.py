"""The lease a running sync holds on its source, so a sync whose process died is resumed.

Claiming is one conditional UPDATE: a source already running under a live lease is refused
(two syncs of one source never run at once). The run renews the lease between items; a
renewal that finds the source gone or taken stops the run (`SyncLost`).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.sources.models import Source, SourceSync, SyncStatus
from ragplatform.leases import lease_expiry, lease_lapsed, lease_renew


class SyncBusy(Exception):
    """Another sync of this source is running."""


class SyncLost(Exception):
    """The source was removed, or its lease taken back, while this sync ran."""


def sync_claim(*, source_id: int) -> SourceSync:
    """Mark the source running under a fresh lease, and return its open run: the one a killed
    sync left (resumed, with its counts) or a new one."""
    with transaction.atomic():
        claimed = (
            Source.objects.filter(pk=source_id)
            .filter(~Q(status=SyncStatus.RUNNING) | lease_lapsed())
            .update(
                status=SyncStatus.RUNNING,
                lease_expires_at=lease_expiry(seconds=settings.RAG_SOURCE_LEASE_S),
            )
        )
        if not claimed:
            if not Source.objects.filter(pk=source_id).exists():
                raise SyncLost("The source no longer exists.")
            raise SyncBusy("A sync of this source is already running; try again when it ends.")
        run = SourceSync.objects.filter(source_id=source_id, ended_at__isnull=True).first()
        if run is None:
            run = SourceSync.objects.create(source_id=source_id)
            Source.objects.filter(pk=source_id).update(sync_started_at=run.started_at)
    return run


class LeaseKeeper:
    """Renews the lease when a third of it has passed; called between items."""

    def __init__(self, *, source_id: int) -> None:
        self.source_id = source_id
        self.renewed = time.monotonic()

    def keep(self) -> None:
        if time.monotonic() - self.renewed < settings.RAG_SOURCE_LEASE_S / 3:
            return
        renewed = lease_renew(
            Source,
            pk=self.source_id,
            seconds=settings.RAG_SOURCE_LEASE_S,
            held="status = %(running)s",
            params={"running": SyncStatus.RUNNING},
        )
        if renewed is None:
            raise SyncLost("The source was removed or taken over while it synced.")
        self.renewed = time.monotonic()


def sync_end(*, run: SourceSync, error: str) -> None:
    """Close the run and copy its counts to the source; N failures in a row mark the source."""
    status = SyncStatus.FAILED if error else SyncStatus.OK
    now = timezone.now()
    with transaction.atomic():
        SourceSync.objects.filter(pk=run.pk).update(ended_at=now, status=status, error=error)
        source = Source.objects.select_for_update().filter(pk=run.source_id).first()
        if source is None:
            return
        source.status, source.last_error, source.sync_ended_at = status, error, now
        source.failures_in_row = source.failures_in_row + 1 if error else 0
        source.lease_expires_at = None
        source.save(
            update_fields=[
                "status",
                "last_error",
                "sync_ended_at",
                "failures_in_row",
                "lease_expires_at",
            ]
        )
