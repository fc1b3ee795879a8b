"""Files chosen on the admin upload form, kept on the server when the form had an error.

A browser never fills a file input again, so without this the uploader would have to choose
every file anew. The files go to the same storage as originals (any web process can read
them back), belong to the user who sent them, and are dropped once used or after
RAG_KEPT_UPLOADS_HOURS (a periodic job).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from apps.corpus.models import KeptUpload
from apps.corpus.uploads.batches import IncomingFile


def _fresh_since() -> timedelta:
    return timedelta(hours=settings.RAG_KEPT_UPLOADS_HOURS)


def uploads_keep(*, user_id: int, uploads: Iterable[UploadedFile]) -> list[KeptUpload]:
    kept = []
    for upload in uploads:
        row = KeptUpload(
            token=uuid.uuid4(),
            user_id=user_id,
            filename=(upload.name or "unnamed")[:500],
            size_bytes=upload.size or 0,
        )
        row.file.save(row.filename, upload, save=False)
        row.save()
        kept.append(row)
    return kept


def kept_uploads_get(*, user_id: int, tokens: Sequence[str]) -> list[KeptUpload]:
    """The user's unexpired kept files among `tokens`; anything else (another user's token,
    a malformed one, an expired file) is silently not there."""
    valid = []
    for token in tokens:
        try:
            valid.append(uuid.UUID(token))
        except ValueError:
            continue
    cutoff = timezone.now() - _fresh_since()
    rows = KeptUpload.objects.filter(user_id=user_id, token__in=valid, created_at__gte=cutoff)
    return list(rows.order_by("created_at", "pk"))


def kept_upload_incoming(kept: KeptUpload) -> IncomingFile:
    def read() -> bytes:
        with kept.file.open("rb") as handle:
            return handle.read()

    return IncomingFile(kept.filename, kept.filename, read)


def kept_uploads_discard(*, uploads: Iterable[KeptUpload]) -> None:
    """Drop the rows and, once that commits, their stored files."""
    for kept in uploads:
        name = kept.file.name or ""
        kept.delete()
        if name:
            storage = kept.file.storage
            transaction.on_commit(lambda storage=storage, name=name: storage.delete(name))  # type: ignore[misc]


def kept_uploads_clear(*, user_id: int) -> None:
    """Drop every file kept for this user: a successful upload ends the earlier tries (a file
    the uploader unticked was left out on purpose)."""
    kept_uploads_discard(uploads=KeptUpload.objects.filter(user_id=user_id))


def kept_uploads_expire() -> int:
    """Drop kept files older than RAG_KEPT_UPLOADS_HOURS; returns how many."""
    stale = list(KeptUpload.objects.filter(created_at__lt=timezone.now() - _fresh_since())[:500])
    with transaction.atomic():
        kept_uploads_discard(uploads=stale)
    return len(stale)
