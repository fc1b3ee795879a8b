"""Uploads that cannot hurt the server: safe stored names, a per-user rate, no stale originals."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group, Permission, User
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.corpus.ingestion.services import document_process
from apps.corpus.models import Collection, Document, DocumentStatus
from ragplatform.models import RateCounter
from ragplatform.rate_limits import rate_take, window_start
from tests.concurrency import run_at_once

pytestmark = pytest.mark.django_db


def _client(name: str) -> APIClient:
    """An editor who may also create collections (so each test can name its own)."""
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name="editors"))
    user.user_permissions.add(Permission.objects.get(codename="add_collection"))
    api = APIClient()
    api.force_authenticate(user)
    return api


def _upload(client: APIClient, name: str, data: bytes, collection: str = "IT") -> Any:
    return client.post(
        "/api/documents/",
        {"file": SimpleUploadedFile(name, data), "collection": collection},
        format="multipart",
    )


class _Stored:
    """A stored original by name, whichever storage keeps it (database or file system)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Stored) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def exists(self) -> bool:
        return default_storage.exists(self.name)

    def unlink(self) -> None:
        default_storage.delete(self.name)


def _stored(document: Document) -> _Stored:
    return _Stored(document.file.name or "")


def test_a_path_in_the_filename_is_stored_under_a_safe_name(settings: LazySettings) -> None:
    response = _upload(_client("ada"), "../../etc/passwd.txt", b"root:x:0:0")
    assert response.status_code == 202
    document = Document.objects.get()
    assert document.filename == "passwd.txt"
    name = document.file.name or ""
    assert name.startswith("documents/") and ".." not in name and name.endswith("/passwd.txt")


def test_with_file_system_storage_the_name_stays_under_media_root(
    settings: LazySettings,
) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    }
    response = _upload(_client("ada"), "../../etc/passwd.txt", b"root:x:0:0")
    assert response.status_code == 202
    stored = Path(Document.objects.get().file.path).resolve()
    assert stored.is_relative_to(Path(settings.MEDIA_ROOT).resolve())
    assert stored.name == "passwd.txt" and stored.read_bytes() == b"root:x:0:0"


def test_uploads_beyond_the_hourly_limit_are_refused_per_user(settings: LazySettings) -> None:
    settings.RAG_UPLOADS_PER_HOUR = 2
    ada, bob = _client("ada"), _client("bob")
    assert _upload(ada, "a.txt", b"one").status_code == 202
    assert _upload(ada, "b.txt", b"two").status_code == 202
    refused = _upload(ada, "c.txt", b"three")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "2 uploaded files an hour" in refused.json()["error"]["message"]
    assert _upload(bob, "c.txt", b"three").status_code == 202
    assert sorted(Document.objects.values_list("filename", flat=True)) == [
        "a.txt",
        "b.txt",
        "c.txt",
    ]


@pytest.mark.django_db(transaction=True)
def test_the_rate_counter_never_lets_two_processes_take_the_last_slot() -> None:
    results = run_at_once(
        lambda: rate_take(key="race", amount=1, limit=5, window=timedelta(hours=1)), threads=8
    )
    assert sorted(results) == [False] * 3 + [True] * 5
    assert not rate_take(key="race", amount=1, limit=5, window=timedelta(hours=1))
    assert rate_take(key="other", amount=5, limit=5, window=timedelta(hours=1))


@pytest.mark.django_db
def test_spent_windows_are_dropped_once_when_a_key_starts_a_new_window() -> None:
    hour = timedelta(hours=1)
    spent = window_start(window=hour) - hour
    RateCounter.objects.create(key="k", window_start=spent, hits=3)
    RateCounter.objects.create(key="other", window_start=spent, hits=3)

    assert rate_take(key="k", amount=1, limit=5, window=hour)  # the window's first hit
    assert not RateCounter.objects.filter(key="k", window_start=spent).exists()
    assert RateCounter.objects.filter(key="other").exists()  # another key's is its own
    RateCounter.objects.create(key="k", window_start=spent - hour, hits=1)
    with CaptureQueriesContext(connection) as statements:
        assert rate_take(key="k", amount=1, limit=5, window=hour)  # later hits: one statement
    assert len(statements) == 1


def test_a_replaced_original_is_removed_after_commit(
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = _client("ada")
    with django_capture_on_commit_callbacks(execute=True):
        _upload(client, "notes.txt", b"first version")
    old = _stored(Document.objects.get())
    with django_capture_on_commit_callbacks(execute=False) as pending:
        _upload(client, "notes.txt", b"second version")
    new = _stored(Document.objects.get())
    assert old != new and old.exists() and new.exists()  # nothing removed before the commit
    for callback in pending:
        callback()
    assert not old.exists() and new.exists()


def test_deleted_documents_lose_their_originals(django_capture_on_commit_callbacks: Any) -> None:
    client = _client("ada")
    with django_capture_on_commit_callbacks(execute=True):
        _upload(client, "a.txt", b"one", collection="Gone")
        _upload(client, "b.txt", b"two", collection="Gone")
    first, second = (_stored(d) for d in Document.objects.order_by("filename"))
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.get(filename="a.txt").delete()
    assert not first.exists() and second.exists()
    with django_capture_on_commit_callbacks(execute=True):
        Collection.objects.get(name="Gone").delete()  # the cascade takes the rest
    assert not second.exists()


def test_reprocessing_a_document_whose_original_is_missing_records_why() -> None:
    _upload(_client("ada"), "notes.txt", b"some text")
    document = Document.objects.get()
    _stored(document).unlink()
    document_process(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "original file is missing" in document.error_message
