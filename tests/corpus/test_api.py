from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.corpus.models import Document, DocumentStatus
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> APIClient:
    # These tests are about uploading; who may upload where is in test_access_writes.py.
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("admin", password="x"))
    return api


def _upload(client: APIClient, name: str, data: bytes, **extra: str) -> object:
    return client.post(
        "/api/documents/",
        {"file": SimpleUploadedFile(name, data), **extra},
        format="multipart",
    )


def test_upload_answers_202_with_status_url_and_processes_on_commit(
    client: APIClient, embedder: CountingEmbedder, django_capture_on_commit_callbacks: object
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:  # type: ignore[operator]
        response = _upload(
            client, "notes.md", b"# Notes\n\nThe VPN uses WireGuard.", collection="IT"
        )

    assert response.status_code == 202  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["status"] == "pending" and body["collection"] == "IT"
    assert response["Location"] == body["status_url"] == f"/api/documents/{body['id']}/"  # type: ignore[index]
    assert len(callbacks) == 1  # the task is enqueued only once the row is committed

    status = client.get(body["status_url"]).json()
    assert status["id"] == body["id"] and status["status"] in {"pending", "processing", "ready"}


def test_unsupported_type_is_415_with_message(client: APIClient) -> None:
    response = _upload(client, "virus.exe", b"MZ\x00\x00")
    assert response.status_code == 415  # type: ignore[attr-defined]
    error = response.json()["error"]  # type: ignore[attr-defined]
    assert error["code"] == "unsupported_file_type" and ".exe" in error["message"]
    assert Document.objects.count() == 0


def test_too_large_is_413(client: APIClient, settings: object) -> None:
    settings.RAG_MAX_UPLOAD_BYTES = 100  # type: ignore[attr-defined]
    response = _upload(client, "big.txt", b"a" * 101)
    assert response.status_code == 413  # type: ignore[attr-defined]
    assert "limit" in response.json()["error"]["message"]  # type: ignore[attr-defined]


def test_missing_file_is_400(client: APIClient) -> None:
    response = client.post("/api/documents/", {"collection": "x"}, format="multipart")
    assert response.status_code == 400
    assert "file" in response.json()["error"]["message"]


def test_anonymous_upload_is_refused() -> None:
    response = _upload(APIClient(), "a.txt", b"hello")
    assert response.status_code in {401, 403}  # type: ignore[attr-defined]


def test_empty_file_is_accepted_then_fails_with_message(
    client: APIClient,
    embedder: CountingEmbedder,
    django_capture_on_commit_callbacks: object,
    settings: object,
) -> None:
    # The immediate backend runs the task at enqueue, as a task worker would shortly after.
    settings.TASKS = {  # type: ignore[attr-defined]
        "default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}
    }
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        response = _upload(client, "empty.txt", b"")
    document = Document.objects.get(pk=response.json()["id"])  # type: ignore[attr-defined]
    assert document.status == DocumentStatus.FAILED and "empty" in document.error_message.lower()
