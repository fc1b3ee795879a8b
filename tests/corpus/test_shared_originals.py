"""Originals in the database, so workers anywhere read what the web process received: the
storage itself, the fallback to originals stored on disk before, the one-off move command, a
worker in another process whose media folder is empty, and a worker killed mid-document."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from django.conf import LazySettings, settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from apps.corpus.ingestion.services import document_submit
from apps.corpus.ingestion.sweeps import documents_reclaim
from apps.corpus.models import Document, DocumentStatus
from apps.corpus.uploads.batches import document_schedule
from ragplatform.models import StoredFile
from ragplatform.storage import DatabaseStorage
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db

TEXT = b"# Leave policy\n\nEmployees take twenty-six days of annual leave a year.\n"


def test_originals_are_kept_in_the_database_by_default(tmp_path: Path) -> None:
    document = document_submit(
        collection=CollectionFactory.create(), filename="a.md", data=TEXT
    ).document

    assert isinstance(default_storage._wrapped, DatabaseStorage)  # type: ignore[attr-defined]
    row = StoredFile.objects.get(name=document.file.name)
    assert bytes(row.content) == TEXT and row.size == len(TEXT)
    assert not any(Path(settings.MEDIA_ROOT).rglob("*.md"))  # nothing on the local disk
    with document.file.open("rb") as handle:
        assert handle.read() == TEXT


def test_the_database_storage_saves_under_a_free_name_and_deletes() -> None:
    storage = DatabaseStorage()
    first = storage.save("docs/a.txt", ContentFile(b"one"))
    second = storage.save("docs/a.txt", ContentFile(b"two"))

    assert first == "docs/a.txt" and second != first and second.startswith("docs/a")
    assert storage.exists(second) and storage.size(second) == 3
    with storage.open(second) as handle:
        assert handle.read() == b"two"
    storage.delete(first)
    assert not storage.exists(first)
    with pytest.raises(FileNotFoundError):
        storage.open(first)
    with pytest.raises(ValueError, match="save"):
        storage.open(second, "wb")


def _on_disk(name: str, data: bytes) -> None:
    """An original stored by the file system storage, before the database kept them."""
    FileSystemStorage(location=settings.MEDIA_ROOT).save(name, ContentFile(data))


def test_originals_stored_on_disk_before_are_still_read_and_served(client: Client) -> None:
    document = document_submit(
        collection=CollectionFactory.create(), filename="a.md", data=TEXT
    ).document
    name = document.file.name or ""
    StoredFile.objects.all().delete()
    _on_disk(name, TEXT)
    client.force_login(User.objects.create_superuser("root", "r@example.com", "x"))

    response = client.get(reverse("document-source", args=[document.pk]))

    assert response.status_code == 200
    assert b"".join(response.streaming_content) == TEXT  # type: ignore[attr-defined]


def test_the_move_command_copies_disk_originals_into_the_database() -> None:
    collection = CollectionFactory.create()
    moved = document_submit(collection=collection, filename="a.md", data=TEXT).document
    kept = document_submit(collection=collection, filename="b.md", data=b"# B\n\nBee.\n").document
    gone = document_submit(collection=collection, filename="c.md", data=b"# C\n\nSea.\n").document
    StoredFile.objects.filter(name__in=[moved.file.name, gone.file.name]).delete()
    _on_disk(moved.file.name or "", TEXT)

    dry = StringIO()
    call_command("originals_move", "--dry-run", "--json", stdout=dry)
    assert json.loads(dry.getvalue())["moved"] == [moved.file.name]
    assert not StoredFile.objects.filter(name=moved.file.name).exists()

    out = StringIO()
    call_command("originals_move", "--delete-local", stdout=out)

    assert "Moved 1 originals into the database; 1 were already there; 1 are missing." in (
        out.getvalue()
    )
    assert f"missing: {gone.file.name}" in out.getvalue()
    assert bytes(StoredFile.objects.get(name=moved.file.name).content) == TEXT
    assert not (Path(settings.MEDIA_ROOT) / (moved.file.name or "")).exists()
    assert StoredFile.objects.filter(name=kept.file.name).exists()


def test_the_move_command_refuses_when_originals_live_on_the_file_system(
    settings: LazySettings,
) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    }
    with pytest.raises(CommandError, match="nothing to move"):
        call_command("originals_move")


# A worker started the way a deployment starts one, but on the test database; its environment
# points RAG_MEDIA_ROOT at an empty folder, as on a machine that never received the upload.
_WORKER = """
import sys
import django
import ragplatform.settings as project_settings
project_settings.DATABASES["default"]["NAME"] = sys.argv[1]
django.setup()
from django.core.management import call_command
call_command("worker", "--batch", "--no-startup-delay")
"""


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_a_worker_with_an_empty_media_folder_ingests_an_uploaded_file(tmp_path: Path) -> None:
    document = document_submit(
        collection=CollectionFactory.create(), filename="a.md", data=TEXT
    ).document
    document_schedule(document=document, wait=False)  # enqueued at once: no transaction here
    empty_media = tmp_path / "remote-media"
    empty_media.mkdir()
    root = Path(settings.BASE_DIR)
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "DJANGO_SETTINGS_MODULE": "ragplatform.settings",
        "RAG_MEDIA_ROOT": str(empty_media),
        "RAG_EMBEDDING_CACHE_DIR": str(tmp_path / "remote-cache"),
    }

    done = subprocess.run(
        [sys.executable, "-c", _WORKER, connection.settings_dict["NAME"]],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY, document.error_message
    assert document.chunk_count >= 1 and document.attempts == 1
    assert list(empty_media.iterdir()) == []  # it read the original from the database
    assert Document.objects.get(pk=document.pk).chunks.exists()


def _worker(database: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, database],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_a_document_whose_worker_was_killed_is_reclaimed_and_finished_by_another(
    tmp_path: Path, settings: LazySettings
) -> None:
    paragraphs = "\n\n".join(f"Paragraph {n} about leave, travel and expenses." for n in range(200))
    document = document_submit(
        collection=CollectionFactory.create(),
        filename="long.md",
        data=f"# Policy\n\n{paragraphs}".encode(),
    ).document
    document_schedule(document=document, wait=False)
    env = {
        **os.environ,
        "PYTHONPATH": str(settings.BASE_DIR),
        "DJANGO_SETTINGS_MODULE": "ragplatform.settings",
        "RAG_DOCUMENT_LEASE_S": "3",
        "RAG_EMBEDDING_CACHE_DIR": str(tmp_path / "cache"),
    }
    database = connection.settings_dict["NAME"]

    first = _worker(database, env)
    deadline = time.monotonic() + 120
    while Document.objects.get(pk=document.pk).status != DocumentStatus.PROCESSING:
        assert time.monotonic() < deadline and first.poll() is None, "the worker never started"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)  # dies mid-document: no cleanup, no final status
    first.wait(timeout=30)
    assert Document.objects.get(pk=document.pk).status == DocumentStatus.PROCESSING

    time.sleep(3.5)  # its lease (3 s in the worker) runs out, as nobody renews it
    assert documents_reclaim().requeued == (document.pk,)

    second = _worker(database, env)
    output, _ = second.communicate(timeout=600)
    assert second.returncode == 0, output[-3000:]
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY, document.error_message
    assert document.attempts == 2 and document.lease_expires_at is None
