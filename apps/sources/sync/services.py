"""Writes of sources: create one, set its credentials, pause it, ask for a sync now."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.db.models import Q

from apps.corpus.models import Collection
from apps.sources.credentials import credentials_encrypt
from apps.sources.models import Source, SourceKind, SyncStatus
from apps.sources.sync.leases import SyncBusy


def source_create(
    *,
    name: str,
    kind: SourceKind,
    location: str,
    collection: Collection,
    credentials: Mapping[str, str] | None = None,
    include: str = "",
    exclude: str = "",
    every_minutes: int | None = None,
) -> Source:
    return Source.objects.create(
        name=name,
        kind=kind,
        location=location,
        collection=collection,
        credentials_encrypted=credentials_encrypt(values=dict(credentials or {})),
        include_patterns=include,
        exclude_patterns=exclude,
        every_minutes=every_minutes,
    )


def source_credentials_set(*, source: Source, credentials: Mapping[str, str]) -> None:
    source.credentials_encrypted = credentials_encrypt(values=dict(credentials))
    Source.objects.filter(pk=source.pk).update(credentials_encrypted=source.credentials_encrypted)


def sources_pause(*, source_ids: list[int], paused: bool) -> int:
    return Source.objects.filter(pk__in=source_ids).update(paused=paused)


def source_sync_request(*, source_id: int) -> None:
    """Queue a sync now (the admin's "Sync now"); refused while one is queued or running."""
    from apps.sources.tasks import source_sync_task

    with transaction.atomic():
        claimed = (
            Source.objects.filter(pk=source_id)
            .filter(~Q(status__in=[SyncStatus.QUEUED, SyncStatus.RUNNING]))
            .update(status=SyncStatus.QUEUED)
        )
        if not claimed:
            raise SyncBusy("A sync of this source is already queued or running.")
        transaction.on_commit(lambda: source_sync_task.enqueue(source_id))
