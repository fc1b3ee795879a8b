"""Documents whose worker died: the lease processing holds, and the sweep that requeues or fails
a document once its lease has expired."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.conf import LazySettings
from django.db import connection, connections
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.corpus.ingestion.leases import document_claim, document_lease_kept, document_lease_renew
from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.ingestion.sweeps import documents_reclaim
from apps.corpus.models import Document, DocumentStatus
from apps.corpus.uploads.batches import document_schedule
from tests.concurrency import run_at_once
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory, DocumentFactory

pytestmark = pytest.mark.django_db

TEXT = b"# Leave policy\n\nEmployees take twenty-six days of annual leave a year.\n"


def _died_while_processing(*, attempts: int, minutes_ago: int = 5) -> Document:
    """A document a worker claimed, then stopped renewing (killed)."""
    document = DocumentFactory.create(status=DocumentStatus.PENDING)
    Document.objects.filter(pk=document.pk).update(attempts=attempts - 1)
    document_claim(document_id=document.pk)
    Document.objects.filter(pk=document.pk).update(
        lease_expires_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return Document.objects.get(pk=document.pk)


def test_processing_claims_with_a_lease_and_releases_it_when_done(
    embedder: CountingEmbedder, settings: LazySettings
) -> None:
    settings.RAG_DOCUMENT_LEASE_S = 120
    document = document_submit(
        collection=CollectionFactory.create(), filename="a.md", data=TEXT
    ).document
    document_schedule(document=document, wait=False)
    document.refresh_from_db()
    assert document.queued_at is not None and document.attempts == 0

    document_claim(document_id=document.pk)
    claimed = Document.objects.get(pk=document.pk)
    assert claimed.status == DocumentStatus.PROCESSING and claimed.attempts == 1
    assert claimed.queued_at is None
    assert claimed.lease_expires_at is not None
    assert (
        timedelta(seconds=110) < claimed.lease_expires_at - timezone.now() <= timedelta(seconds=120)
    )

    document_process(document_id=document.pk)
    done = Document.objects.get(pk=document.pk)
    assert done.status == DocumentStatus.READY and done.lease_expires_at is None
    assert done.attempts == 2  # the claim above and processing's own


def test_renewing_pushes_the_lease_forward_only_while_processing() -> None:
    document = _died_while_processing(attempts=1)
    assert document.lease_expires_at is not None and document.lease_expires_at < timezone.now()

    assert document_lease_renew(document_id=document.pk)
    document.refresh_from_db()
    assert document.lease_expires_at is not None and document.lease_expires_at > timezone.now()

    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.READY)
    assert not document_lease_renew(document_id=document.pk)


@pytest.mark.django_db(transaction=True)
def test_a_long_step_keeps_its_lease_alive(settings: LazySettings) -> None:
    settings.RAG_DOCUMENT_LEASE_S = 3  # renewed every second
    document = DocumentFactory.create(status=DocumentStatus.PENDING)
    document_claim(document_id=document.pk)
    Document.objects.filter(pk=document.pk).update(lease_expires_at=timezone.now())

    with document_lease_kept(document_id=document.pk):
        threading.Event().wait(1.6)  # the renewer ran at least once
        document.refresh_from_db()
        assert document.lease_expires_at is not None
        assert document.lease_expires_at > timezone.now() + timedelta(seconds=1)
    assert documents_reclaim().requeued == ()
    connections.close_all()


def _database_now() -> datetime:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        return cursor.fetchone()[0]


@pytest.mark.parametrize("skew", [timedelta(days=-1), timedelta(days=1)], ids=["behind", "ahead"])
def test_the_lease_keeps_to_the_database_clock_whatever_the_workers_clock(
    settings: LazySettings, monkeypatch: pytest.MonkeyPatch, skew: timedelta
) -> None:
    settings.RAG_DOCUMENT_LEASE_S = 120
    lapsed = _died_while_processing(attempts=1)  # five minutes ago, by every clock
    live = DocumentFactory.create(status=DocumentStatus.PENDING)
    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + skew)  # this machine's clock is off

    document_claim(document_id=live.pk)
    assert document_lease_renew(document_id=live.pk)
    granted = Document.objects.get(pk=live.pk).lease_expires_at
    assert granted is not None
    assert timedelta(seconds=100) < granted - _database_now() <= timedelta(seconds=120)

    # A sweep on a machine whose clock is off the other way, then on a right one: the live
    # document stays, the lapsed one is taken back.
    monkeypatch.setattr(timezone, "now", lambda: real_now() - skew)
    assert documents_reclaim().requeued == (lapsed.pk,)
    monkeypatch.setattr(timezone, "now", real_now)
    assert documents_reclaim().requeued == ()
    assert Document.objects.get(pk=live.pk).status == DocumentStatus.PROCESSING


def test_an_expired_lease_is_requeued_while_attempts_remain(
    settings: LazySettings, django_capture_on_commit_callbacks: Any
) -> None:
    settings.RAG_DOCUMENT_MAX_ATTEMPTS = 3
    document = _died_while_processing(attempts=2)
    alive = DocumentFactory.create(status=DocumentStatus.PENDING)
    document_claim(document_id=alive.pk)  # its lease runs

    with django_capture_on_commit_callbacks(execute=True):
        result = documents_reclaim()

    assert result.requeued == (document.pk,) and result.failed == ()
    document.refresh_from_db()
    assert document.status == DocumentStatus.PENDING and document.progress == 0
    assert document.queued_at is not None and document.lease_expires_at is None
    assert document.attempts == 2  # kept: the limit counts every attempt
    queued = DBTaskResult.objects.filter(task_path__endswith="document_process_task")
    assert [r.args_kwargs["args"] for r in queued] == [[document.pk]]
    assert Document.objects.get(pk=alive.pk).status == DocumentStatus.PROCESSING


def test_an_expired_lease_fails_the_document_after_the_last_attempt(
    settings: LazySettings, django_capture_on_commit_callbacks: Any
) -> None:
    settings.RAG_DOCUMENT_MAX_ATTEMPTS = 3
    document = _died_while_processing(attempts=3)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        result = documents_reclaim()

    assert result.failed == (document.pk,) and not callbacks
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "interrupted 3 times" in document.error_message
    assert "re-process" in document.error_message


def test_processing_from_before_leases_is_reclaimed_once_it_stood_still_for_a_lease(
    settings: LazySettings,
) -> None:
    settings.RAG_DOCUMENT_LEASE_S = 60
    old = DocumentFactory.create(status=DocumentStatus.PROCESSING)
    recent = DocumentFactory.create(status=DocumentStatus.PROCESSING)
    Document.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(minutes=5))

    assert documents_reclaim().requeued == (old.pk,)
    assert Document.objects.get(pk=recent.pk).status == DocumentStatus.PROCESSING


def test_reprocessing_by_hand_starts_the_attempt_count_again() -> None:
    document = _died_while_processing(attempts=3)
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.FAILED, error_message="x")

    document_schedule(document=document, wait=False)

    document.refresh_from_db()
    assert document.attempts == 0 and document.queued_at is not None


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_handle_each_stale_document_once(settings: LazySettings) -> None:
    settings.RAG_DOCUMENT_MAX_ATTEMPTS = 5
    stale = [_died_while_processing(attempts=1).pk for _ in range(30)]
    results = run_at_once(lambda: documents_reclaim().requeued, threads=2)
    handled = [pk for requeued in results for pk in requeued]
    assert sorted(handled) == sorted(stale)
    assert DBTaskResult.objects.count() == len(stale)
