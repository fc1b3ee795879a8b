"""Bad input at a source is a clear error on the sync or on its one item, and loses nothing
already stored: wrong credentials, names no path may hold, loops, limits, collisions."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from apps.corpus.ingestion.services import document_submit
from apps.corpus.models import Document
from apps.sources.kinds.base import ItemError, Limits, Listed
from apps.sources.kinds.s3 import S3Connector
from apps.sources.models import Source, SourceItem, SyncStatus
from apps.sources.sync import run as sync_run
from apps.sources.sync.run import source_sync
from tests.conftest import CountingEmbedder
from tests.sources import samba_dovecot, servers
from tests.sources.conftest import folder_place, s3_place, smb_place, webdav_place
from tests.sources.syncing import credentials_replace

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", ["s3", "webdav", "smb"])
def test_wrong_credentials_fail_the_sync_and_keep_the_documents(
    kind: str, request: pytest.FixtureRequest, source_of: Any, embedder: CountingEmbedder
) -> None:
    if kind == "s3":
        place: Any = s3_place(request.getfixturevalue("seaweedfs"))
        wrong = {"access_key": servers.S3_ACCESS_KEY, "secret_key": "not-the-secret"}
    elif kind == "webdav":
        place = webdav_place(request.getfixturevalue("wsgidav"))
        wrong = {"username": servers.DAV_USER, "password": "not-the-password"}
    else:
        place = smb_place(request.getfixturevalue("samba"))
        wrong = {"username": samba_dovecot.SMB_USER, "password": "not-the-password"}
    place.put("alpha", "Aardvarks dig burrows at night.")
    source = source_of(place)
    source_sync(source_id=source.pk, wait=True)
    credentials_replace(source, **wrong)

    report = source_sync(source_id=source.pk, wait=True)

    assert report.status == "failed" and "refused the credentials" in report.error
    assert Document.objects.filter(collection=source.collection).count() == 1
    assert "not-the" not in Source.objects.get(pk=source.pk).credentials_encrypted


def test_symlink_loops_odd_and_long_names_never_stop_the_rest(
    tmp_path: Path, source_of: Any, embedder: CountingEmbedder
) -> None:
    place = folder_place(tmp_path)
    place.put("alpha", "Aardvarks dig burrows at night.")
    os.symlink(place.root, place.root / "loop")
    (place.root.joinpath(os.fsdecode(b"caf\xe9.md"))).write_bytes(b"Latin-1 named file.")
    long_name = "x" * 200 + "/" + "y" * 200 + ".md"
    (place.root / long_name).parent.mkdir()
    (place.root / long_name).write_text("Yaks live on high plateaus.")
    source = source_of(place)

    report = source_sync(source_id=source.pk, wait=True)

    assert (report.status, report.added, report.failed) == ("ok", 2, 1)
    assert "UTF-8" in SourceItem.objects.get(source=source, document__isnull=True).error
    assert all(len(n) <= 240 for n in Document.objects.values_list("filename", flat=True))


@pytest.mark.parametrize("key", ["../../etc/passwd.md", "/etc/passwd.md", "a//b.md", "a/./b.md"])
def test_keys_with_dots_or_absolute_paths_are_refused(
    key: str, seaweedfs: servers.Running, tmp_path: Path
) -> None:
    # SeaweedFS itself refuses such keys, AWS does not: the connector must refuse them too.
    place = s3_place(seaweedfs)
    limits = Limits(max_files=10, max_file_bytes=1000, max_pages=1, max_depth=0, timeout_s=5)
    connector = S3Connector(location=place.location, credentials=place.credentials, limits=limits)
    with pytest.raises(ItemError, match="not a plain relative path"):
        connector.fetch(Listed(key=key, marker="", location=key))


def test_more_files_than_the_limit_fails_and_deletes_nothing(
    tmp_path: Path, source_of: Any, embedder: CountingEmbedder
) -> None:
    place = folder_place(tmp_path)
    for n in range(3):
        place.put(f"page{n}", f"Entry {n}.")
    source = source_of(place)
    source_sync(source_id=source.pk, wait=True)
    Source.objects.filter(pk=source.pk).update(max_files=2)

    report = source_sync(source_id=source.pk, wait=True)

    assert report.status == "failed" and "more than 2 files" in report.error
    assert Document.objects.filter(collection=source.collection).count() == 3


def test_a_name_taken_by_an_upload_is_not_overwritten(
    tmp_path: Path, source_of: Any, embedder: CountingEmbedder
) -> None:
    place = folder_place(tmp_path)
    place.put("alpha", "Aardvarks from the source.")
    source = source_of(place)
    upload = document_submit(collection=source.collection, filename="alpha.md", data=b"Mine.")

    report = source_sync(source_id=source.pk, wait=True)

    assert report.failed == 1 and "not from this source" in report_error(source)
    assert Document.objects.get(pk=upload.document.pk).sha256 == upload.document.sha256


def report_error(source: Source) -> str:
    return SourceItem.objects.get(source=source).error


def test_a_source_removed_while_syncing_stops_the_sync(
    tmp_path: Path, source_of: Any, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    place = folder_place(tmp_path)
    place.put("alpha", "Aardvarks.")
    place.put("beta", "Beavers.")
    source = source_of(place)
    real = sync_run.item_sync

    def removed_meanwhile(**kwargs: Any) -> Any:
        Source.objects.filter(pk=source.pk).delete()
        return real(**kwargs)

    monkeypatch.setattr(sync_run, "item_sync", removed_meanwhile)
    report = source_sync(source_id=source.pk, wait=True)

    assert report.status == "failed" and "removed" in report.error
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not SourceItem.objects.filter(source_id=source.pk).exists()


def test_a_missing_folder_is_a_clear_error(tmp_path: Path, source_of: Any) -> None:
    place = folder_place(tmp_path)
    source = source_of(place, location=str(tmp_path / "nowhere"))
    report = source_sync(source_id=source.pk)
    assert report.status == SyncStatus.FAILED and "does not exist" in report.error
