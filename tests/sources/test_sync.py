"""Every kind of source against its real server: first sync, a change, a deletion (its chunks
gone from search), a rename (no re-embedding), a killed sync resumed without duplicates, a
file over the limit and an unreachable server (a clear error, nothing stored lost)."""

from __future__ import annotations

from typing import Any

import pytest

from apps.corpus.models import Chunk, Document, DocumentStatus
from apps.sources.models import Source, SourceItem, SyncStatus
from tests.conftest import CountingEmbedder
from tests.sources.syncing import FetchSpy, hits, killed_then_resumed, synced

pytestmark = pytest.mark.django_db


def test_first_sync_adds_and_an_unchanged_sync_reads_nothing(
    place: Any, source_of: Any, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    place.put("alpha", "Aardvarks dig burrows at night.")
    place.put("guide/beta", "Beavers build dams across rivers.")
    source = source_of(place)

    first = synced(source)
    embedded = embedder.passages_embedded
    spy = FetchSpy(monkeypatch)
    second = synced(source)

    assert (first.status, first.added, first.failed, first.error) == ("ok", 2, 0, "")
    assert set(
        Document.objects.filter(collection=source.collection).values_list("status", flat=True)
    ) == {DocumentStatus.READY}
    assert hits(source, "aardvarks") == 1 and hits(source, "beavers") == 1
    assert (second.unchanged, second.added, second.updated, second.deleted) == (2, 0, 0, 0)
    assert spy.reads == 0
    assert embedder.passages_embedded == embedded
    source.refresh_from_db()
    assert source.status == SyncStatus.OK and source.syncs.count() == 2


def test_a_change_at_the_source_updates_its_document(
    place: Any, source_of: Any, embedder: CountingEmbedder
) -> None:
    place.put("alpha", "Aardvarks dig burrows at night.")
    source = source_of(place)
    synced(source)
    document = Document.objects.get(collection=source.collection)

    place.put("alpha", "Albatrosses glide over the ocean for days.")
    report = synced(source)

    assert (report.updated, report.added, report.unchanged) == (1, 0, 0)
    assert Document.objects.get(collection=source.collection).pk == document.pk
    assert hits(source, "albatrosses") == 1 and hits(source, "aardvarks") == 0


def test_a_deletion_at_the_source_takes_its_chunks_out_of_search(
    place: Any, source_of: Any, embedder: CountingEmbedder
) -> None:
    place.put("alpha", "Aardvarks dig burrows at night.")
    place.put("beta", "Beavers build dams across rivers.")
    source = source_of(place)
    synced(source)
    beta = Document.objects.get(collection=source.collection, filename__contains="beta")

    place.remove("beta")
    report = synced(source)

    assert (report.deleted, report.unchanged) == (1, 1)
    assert hits(source, "beavers") == 0 and hits(source, "aardvarks") == 1
    assert not Chunk.objects.filter(document_id=beta.pk).exists()
    assert not Document.objects.filter(pk=beta.pk).exists()
    assert SourceItem.objects.filter(source=source).count() == 1


def test_a_rename_keeps_the_document_and_its_vectors(
    place: Any, source_of: Any, embedder: CountingEmbedder
) -> None:
    place.put("alpha", "Aardvarks dig burrows at night.")
    source = source_of(place)
    synced(source)
    document = Document.objects.get(collection=source.collection)
    chunk_ids = set(Chunk.objects.filter(document=document).values_list("pk", flat=True))
    embedded = embedder.passages_embedded

    place.move("alpha", "archive/alpha-old")
    report = synced(source)

    assert (report.renamed, report.added, report.deleted) == (1, 0, 0)
    moved = Document.objects.get(collection=source.collection)
    assert moved.pk == document.pk and "alpha-old" in moved.filename
    assert set(Chunk.objects.filter(document=moved).values_list("pk", flat=True)) == chunk_ids
    assert embedder.passages_embedded == embedded
    assert SourceItem.objects.get(source=source).key.startswith(("archive/", "http"))


def test_a_killed_sync_resumes_without_duplicates(
    place: Any, source_of: Any, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed_then_resumed(place, source_of, monkeypatch)


def test_a_file_over_the_limit_fails_alone_and_keeps_what_was_stored(
    place: Any, source_of: Any, embedder: CountingEmbedder
) -> None:
    place.put("alpha", "Aardvarks dig burrows at night.")
    place.put("beta", "Beavers build dams.")
    source = source_of(place, max_file_bytes=2_000)
    synced(source)

    place.put("beta", "Beavers build dams. " + "More about beavers and their lodges. " * 100)
    report = synced(source)

    assert (report.failed, report.unchanged, report.deleted, report.status) == (1, 1, 0, "ok")
    item = SourceItem.objects.get(source=source, error__contains="limit")
    assert item.document is not None and item.document.status == DocumentStatus.READY
    assert hits(source, "beavers") == 1  # the stored version still answers


def test_an_unreachable_source_fails_clearly_and_deletes_nothing(
    place: Any, source_of: Any, embedder: CountingEmbedder
) -> None:
    place.put("alpha", "Aardvarks dig burrows at night.")
    source = source_of(place)
    synced(source)
    gone = "/nonexistent/folder" if place.kind == "folder" else "http://127.0.0.1:9/x/"
    if place.kind == "smb":
        gone = "smb://127.0.0.1:9/docs/x"
    if place.kind == "web":
        gone += "sitemap.xml"
    Source.objects.filter(pk=source.pk).update(location=gone)

    report = synced(source)

    source.refresh_from_db()
    assert report.status == "failed" and source.status == SyncStatus.FAILED
    assert source.last_error and (
        "reached" in source.last_error
        or "not exist" in source.last_error
        or "cannot be read" in source.last_error
    )
    assert source.failures_in_row == 1
    assert hits(source, "aardvarks") == 1
