"""Stored original files that no document points to any more are removed from storage; and
originals stored on a local disk before they moved to the database are moved there.

A re-upload that replaces a document's file, and a deleted document (one by one, in bulk, or
with its collection), leave an original behind. It is removed once the transaction commits,
so a rollback never loses a file that a row still names; a file another row still names is
kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete

from apps.corpus.models import Document
from ragplatform.storage import DatabaseStorage

logger = logging.getLogger(__name__)


def original_discard_on_commit(*, name: str) -> None:
    if name:
        transaction.on_commit(lambda: _discard(name))


def _discard(name: str) -> None:
    if Document.objects.filter(file=name).exists():
        return
    storage = Document._meta.get_field("file").storage
    try:
        storage.delete(name)
    except OSError:
        # Storage trouble must not fail the request that already committed; the file is orphaned.
        logger.warning("Could not remove the stored original %s", name, exc_info=True)


def _document_deleted(sender: type[Document], instance: Document, **kwargs: Any) -> None:
    original_discard_on_commit(name=instance.file.name or "")


def originals_cleanup_connect() -> None:
    # A signal and not a service call: cascades (a deleted collection) bypass every service.
    post_delete.connect(_document_deleted, sender=Document, dispatch_uid="corpus-original-discard")


class OriginalsNotInDatabase(Exception):
    """Moving originals into the database makes sense only when the database keeps them."""


@dataclass(frozen=True)
class OriginalsMoved:
    moved: tuple[str, ...]  # copied from this machine's MEDIA_ROOT into the database
    already: int  # already in the database
    missing: tuple[str, ...]  # neither in the database nor on this machine


def originals_move(*, dry_run: bool, delete_local: bool) -> OriginalsMoved:
    """Copy the originals that are still on this machine's disk (stored before
    RAG_ORIGINALS_STORAGE=database) into the database, so every worker can read them."""
    storage = Document._meta.get_field("file").storage
    if not isinstance(storage, DatabaseStorage):
        raise OriginalsNotInDatabase(
            "Originals are kept on the file system (RAG_ORIGINALS_STORAGE=filesystem); "
            "there is nothing to move."
        )
    moved, missing, already = [], [], 0
    for name in Document.objects.exclude(file="").values_list("file", flat=True).iterator():
        if storage.stored(name):
            already += 1
        elif not storage.exists(name):
            missing.append(name)
        else:
            moved.append(name)
            if not dry_run:
                storage.adopt_local(name)
                if delete_local:
                    storage.local_delete(name)
    return OriginalsMoved(tuple(moved), already, tuple(missing))
