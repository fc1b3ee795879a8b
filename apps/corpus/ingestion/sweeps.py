"""Periodic corpus jobs (registered in `CorpusConfig.ready()`, run by every `manage.py worker`).

`documents_reclaim` takes back documents whose worker died mid-processing (its lease expired,
on the database's clock): requeued while attempts remain, failed with a message after that.
Several workers may sweep at once: rows are claimed with SKIP LOCKED, so each stale document
is handled by one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.corpus.models import Document, DocumentStatus
from apps.corpus.tasks import document_process_task
from ragplatform.leases import db_time, lease_lapsed

# A bounded batch per run keeps one sweep short; the next run takes the rest.
SWEEP_BATCH = 200


@dataclass(frozen=True)
class ReclaimResult:
    requeued: tuple[int, ...]
    failed: tuple[int, ...]


def _gave_up_message(attempts: int) -> str:
    return (
        f"Processing was interrupted {attempts} times (the task worker stopped responding, "
        "for example because it was killed or ran out of memory); re-process the document "
        "to try again."
    )


def _expired() -> Q:
    # A row with no lease at all (processing started before leases existed) counts as expired
    # once it has not changed for a whole lease.
    stood_still = db_time(seconds_from_now=-settings.RAG_DOCUMENT_LEASE_S)
    return lease_lapsed() | Q(lease_expires_at__isnull=True, updated_at__lt=stood_still)


def documents_reclaim() -> ReclaimResult:
    """Requeue or fail every document in `processing` whose lease expired."""
    now = timezone.now()  # only the rows' own stamps: what expired is the database's call
    limit = settings.RAG_DOCUMENT_MAX_ATTEMPTS
    with transaction.atomic():
        stale = list(
            Document.objects.select_for_update(skip_locked=True)
            .filter(_expired(), status=DocumentStatus.PROCESSING)
            .order_by("pk")
            .values_list("pk", "attempts")[:SWEEP_BATCH]
        )
        requeued = tuple(pk for pk, attempts in stale if attempts < limit)
        failed = [(pk, attempts) for pk, attempts in stale if attempts >= limit]
        Document.objects.filter(pk__in=requeued).update(
            status=DocumentStatus.PENDING,
            progress=0,
            lease_expires_at=None,
            queued_at=now,
            updated_at=now,
        )
        for pk, attempts in failed:
            Document.objects.filter(pk=pk).update(
                status=DocumentStatus.FAILED,
                error_message=_gave_up_message(attempts),
                progress=0,
                lease_expires_at=None,
                updated_at=now,
            )
        for pk in requeued:
            transaction.on_commit(lambda pk=pk: document_process_task.enqueue(pk))  # type: ignore[misc]
    return ReclaimResult(requeued=requeued, failed=tuple(pk for pk, _ in failed))
