"""The lease a document in `processing` holds, so a worker that died is noticed.

Processing claims the document (status, lease, attempt count in one UPDATE) and keeps the lease
renewed from a small thread for as long as it runs; a process that dies stops renewing, and
the sweep (`sweeps.py`) takes the document back once the lease has expired. The lease is
granted, renewed and judged on the database's clock (`ragplatform.leases`), so the clocks of
the worker machines never matter.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import F
from django.utils import timezone

from apps.corpus.models import Document, DocumentStatus
from ragplatform.leases import lease_expiry, lease_renew

logger = logging.getLogger(__name__)


def document_claim(*, document_id: int) -> None:
    """Mark the document as being processed by this process, for one more attempt."""
    Document.objects.filter(pk=document_id).update(
        status=DocumentStatus.PROCESSING,
        progress=5,
        queued_at=None,
        lease_expires_at=lease_expiry(seconds=settings.RAG_DOCUMENT_LEASE_S),
        attempts=F("attempts") + 1,
        updated_at=timezone.now(),
    )


def document_lease_renew(*, document_id: int) -> bool:
    """Push the lease forward; never waits for a row lock (the swap holds one for a moment,
    and the next renewal comes well before the lease ends). False when nothing was renewed."""
    renewed = lease_renew(
        Document,
        pk=document_id,
        seconds=settings.RAG_DOCUMENT_LEASE_S,
        held="status = %(processing)s",
        params={"processing": DocumentStatus.PROCESSING},
        skip_locked=True,
    )
    return renewed is not None


def _renew_until(document_id: int, stop: threading.Event) -> None:
    try:
        while not stop.wait(settings.RAG_DOCUMENT_LEASE_S / 3):
            try:
                document_lease_renew(document_id=document_id)
            except DatabaseError:
                # One missed renewal is harmless; the next one comes before the lease ends.
                logger.warning(
                    "Could not renew the lease of document %s", document_id, exc_info=True
                )
    finally:
        connection.close()


@contextmanager
def document_lease_kept(*, document_id: int) -> Iterator[None]:
    """Renew the document's lease in the background while the block runs."""
    stop = threading.Event()
    renewer = threading.Thread(
        target=_renew_until, args=(document_id, stop), name=f"lease-{document_id}", daemon=True
    )
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join(timeout=30)
