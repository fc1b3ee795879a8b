"""Stored original files that no document points to any more are removed from storage.

A re-upload that replaces a document's file, and a deleted document (one by one, in bulk, or
with its collection), leave an original behind. It is removed once the transaction commits,
so a rollback never loses a file that a row still names; a file another row still names is
kept.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete

from apps.corpus.models import Document

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
