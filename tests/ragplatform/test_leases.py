"""The shared lease: granted and renewed on the database's clock, only while held, and lapsed
once the database's clock has passed it."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from apps.corpus.models import Document, DocumentStatus
from ragplatform.leases import lease_expiry, lease_lapsed, lease_renew
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db

PROCESSING = {"processing": DocumentStatus.PROCESSING}


def _renew(document: Document, **options: object) -> tuple[object, ...] | None:
    return lease_renew(
        Document,
        pk=document.pk,
        seconds=60,
        held="status = %(processing)s",
        params=PROCESSING,
        **options,  # type: ignore[arg-type]
    )


def test_a_lease_is_renewed_only_while_held_and_lapses_by_the_databases_clock() -> None:
    document = DocumentFactory.create(status=DocumentStatus.PROCESSING)
    Document.objects.filter(pk=document.pk).update(lease_expires_at=lease_expiry(seconds=-1))
    assert Document.objects.filter(lease_lapsed(), pk=document.pk).exists()

    assert _renew(document, returning="attempts") == (document.attempts,)
    assert not Document.objects.filter(lease_lapsed(), pk=document.pk).exists()
    renewed = Document.objects.get(pk=document.pk).lease_expires_at
    assert renewed is not None and renewed - timezone.now() > timedelta(seconds=50)

    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.READY)
    assert _renew(document) is None


@pytest.mark.django_db(transaction=True)
def test_skip_locked_renews_nothing_rather_than_wait_for_a_row_lock() -> None:
    document = DocumentFactory.create(status=DocumentStatus.PROCESSING)
    locked, done = threading.Event(), threading.Event()

    def hold_the_row() -> None:
        try:
            with transaction.atomic():
                Document.objects.select_for_update().get(pk=document.pk)
                locked.set()
                done.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_row)
    holder.start()
    try:
        assert locked.wait(10)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '2s'")  # one that waited would fail
            assert _renew(document, skip_locked=True) is None
    finally:
        done.set()
        holder.join()
    assert _renew(document, skip_locked=True) == (True,)
