"""What the source tests share: a sync run in the test, search hits, a spy on what a sync
reads from the source, a killed sync resumed, credentials replaced as an operator would."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.corpus.models import Document
from apps.corpus.search.legs import KeywordQuery, SearchFilters, chunks_keyword_search
from apps.sources.credentials import credentials_encrypt
from apps.sources.kinds.base import Closing
from apps.sources.models import Source, SourceSync
from apps.sources.sync import run as sync_run
from apps.sources.sync.leases import SyncBusy
from apps.sources.sync.run import SyncReport, source_sync


def hits(source: Source, word: str) -> int:
    found = chunks_keyword_search(
        query=KeywordQuery.from_text(word),
        filters=SearchFilters(collection_ids=(source.collection_id,)),
        limit=10,
    )
    return len(found)


def synced(source: Source) -> SyncReport:
    return source_sync(source_id=source.pk, wait=True)


class FetchSpy:
    """Counts content read from the source: fetches, and pages a crawl had to read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        real = sync_run.connector_for

        def wrapped(*, source: Source) -> Any:
            connector = real(source=source)
            spy = self

            class Spied:
                def items(self, *, known: Any) -> Any:
                    for item in connector.items(known=known):
                        spy.reads += item.data is not None
                        yield item

                def fetch(self, item: Any) -> bytes:
                    spy.reads += item.data is None
                    return connector.fetch(item)

                def close(self) -> None:  # the SMB or IMAP session the sync would close
                    if isinstance(connector, Closing):
                        connector.close()

            return Spied()

        monkeypatch.setattr(sync_run, "connector_for", wrapped)


def killed_then_resumed(place: Any, source_of: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four items; the sync dies on the third, a second sync is refused while its lease lives,
    and once it lapsed the sync resumes: each item stored once, the run's counts exact."""
    for n in range(4):
        place.put(f"page{n}", f"Entry number {n} tells of item{n}.")
    source = source_of(place)
    real, calls = sync_run.item_sync, [0]

    def dies_on_the_third(**kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 3:
            raise SystemExit("killed")  # what a killed process leaves: nothing after this
        return real(**kwargs)

    monkeypatch.setattr(sync_run, "item_sync", dies_on_the_third)
    with pytest.raises(SystemExit):
        synced(source)
    monkeypatch.setattr(sync_run, "item_sync", real)
    with pytest.raises(SyncBusy):
        synced(source)  # its lease is still live: a second sync is refused
    Source.objects.filter(pk=source.pk).update(lease_expires_at=timezone.now() - timedelta(1))
    report = synced(source)

    assert (report.status, report.added, report.seen) == ("ok", 4, 4)
    assert SourceSync.objects.filter(source=source).count() == 1
    names = list(
        Document.objects.filter(collection=source.collection).values_list("filename", flat=True)
    )
    assert len(names) == len(set(names)) == 4
    assert all(hits(source, f"item{n}") == 1 for n in range(4))


def credentials_replace(source: Source, **values: str) -> None:
    token = credentials_encrypt(values=values)
    Source.objects.filter(pk=source.pk).update(credentials_encrypted=token)
