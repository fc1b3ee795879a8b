"""The documents admin as an uploader and a watcher use it: the collection offered first, files
kept after a form error, waiting time and failure reason in the list, the polled progress view,
and the warning that documents wait while no worker runs."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group, Permission, User
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.corpus.models import Document, DocumentStatus, KeptUpload
from ragplatform.models import StoredFile
from ragplatform.workers import WorkerIdentity, worker_beat
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory, DocumentFactory

pytestmark = pytest.mark.django_db

GUIDE_MD = b"# Leave policy\n\nEmployees take twenty-six days of annual leave a year.\n"
VPN_TXT = b"The VPN uses WireGuard. Ask the help desk for a configuration file.\n"
UPLOAD = "admin:corpus_document_upload"
CHANGELIST = "admin:corpus_document_changelist"


@pytest.fixture
def immediate_tasks(settings: LazySettings) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def _post(client: Client, files: list[tuple[str, bytes]], **fields: object) -> Any:
    uploads = [SimpleUploadedFile(name, data) for name, data in files]
    return client.post(reverse(UPLOAD), {"uploads": uploads, **fields})


def _messages(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


# --- The upload form ----------------------------------------------------------------------------


def test_the_form_offers_the_writable_collection_that_last_received_a_document(
    admin_client: Client,
) -> None:
    CollectionFactory.create(name="Archive")
    recent = CollectionFactory.create(name="Handbook")
    DocumentFactory.create(collection=recent)

    form = admin_client.get(reverse(UPLOAD)).context["form"]

    assert form["collection"].value() == recent.pk


def test_an_editor_is_offered_only_a_collection_they_may_write(client: Client) -> None:
    CollectionFactory.create(name="Another team's")
    mine = CollectionFactory.create(name="Zeta")
    editor = User.objects.create_user("editor", password="x", is_staff=True)
    editor.groups.add(Group.objects.get(name="editors"))
    editor.user_permissions.add(Permission.objects.get(codename="add_document"))
    mine.writer_groups.add(Group.objects.get(name="editors"))
    client.force_login(editor)

    form = client.get(reverse(UPLOAD)).context["form"]

    assert form["collection"].value() == mine.pk


def test_files_chosen_before_a_form_error_are_kept_and_uploaded_on_the_next_try(
    admin_client: Client,
    embedder: CountingEmbedder,
    immediate_tasks: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    collection = CollectionFactory.create(name="Handbook")
    files = [("leave.md", GUIDE_MD), ("vpn.txt", VPN_TXT)]

    failed = _post(admin_client, files, collection=collection.pk, new_collection="Also new")

    assert failed.status_code == 200
    assert "not both" in failed.content.decode()
    kept = list(KeptUpload.objects.order_by("filename"))
    assert [k.filename for k in kept] == ["leave.md", "vpn.txt"]
    page = failed.content.decode()
    assert "leave.md (71\xa0bytes)" in page and "vpn.txt" in page
    assert all(f'value="{k.token}"' in page and "checked" in page for k in kept)

    # Nothing chosen in the file input this time: the kept files are the upload.
    tokens = [str(k.token) for k in kept]
    with django_capture_on_commit_callbacks(execute=True):
        done = _post(admin_client, [], collection=collection.pk, kept=tokens)

    assert done.status_code == 302, done.context["form"].errors
    assert _messages(done) == ["2 queued, 0 unchanged"]
    documents = Document.objects.order_by("filename")
    assert [(d.filename, d.status) for d in documents] == [
        ("leave.md", DocumentStatus.READY),
        ("vpn.txt", DocumentStatus.READY),
    ]
    assert not KeptUpload.objects.exists()
    assert not StoredFile.objects.filter(name__startswith="kept-uploads/").exists()


def test_an_unticked_kept_file_is_left_out(
    admin_client: Client, embedder: CountingEmbedder, immediate_tasks: None
) -> None:
    collection = CollectionFactory.create()
    _post(admin_client, [("leave.md", GUIDE_MD), ("vpn.txt", VPN_TXT)])  # no collection: error
    leave = KeptUpload.objects.get(filename="leave.md")

    done = _post(admin_client, [], collection=collection.pk, kept=[str(leave.token)])

    assert done.status_code == 302
    assert list(Document.objects.values_list("filename", flat=True)) == ["leave.md"]
    assert not KeptUpload.objects.exists()


def test_another_users_kept_file_cannot_be_uploaded(
    admin_client: Client, client: Client, immediate_tasks: None
) -> None:
    other = User.objects.create_superuser("other", "o@example.com", "x")
    client.force_login(other)
    _post(client, [("leave.md", GUIDE_MD)])  # no collection: kept for "other"
    token = str(KeptUpload.objects.get().token)
    collection = CollectionFactory.create()

    response = _post(admin_client, [], collection=collection.pk, kept=[token])

    assert response.status_code == 200
    assert "Choose at least one file." in response.content.decode()
    assert not Document.objects.exists()


def test_kept_files_expire(settings: LazySettings, admin_client: Client) -> None:
    from apps.corpus.uploads.kept import kept_uploads_expire

    _post(admin_client, [("leave.md", GUIDE_MD)])
    KeptUpload.objects.update(created_at=timezone.now() - timedelta(hours=25))
    settings.RAG_KEPT_UPLOADS_HOURS = 24

    assert kept_uploads_expire() == 1
    assert not KeptUpload.objects.exists()


# --- The list ----------------------------------------------------------------------------------


def test_the_list_shows_waiting_time_and_failure_reason(admin_client: Client) -> None:
    DocumentFactory.create(
        filename="queued.md",
        status=DocumentStatus.PENDING,
        queued_at=timezone.now() - timedelta(minutes=7),
    )
    DocumentFactory.create(
        filename="broken.pdf",
        status=DocumentStatus.FAILED,
        error_message="No text could be extracted from the file",
    )

    page = admin_client.get(reverse(CHANGELIST)).content.decode()

    assert "7\xa0minutes" in page
    assert "No text could be extracted from the file" in page


def test_the_list_warns_when_documents_wait_and_no_worker_was_seen(admin_client: Client) -> None:
    DocumentFactory.create(status=DocumentStatus.PENDING, queued_at=timezone.now())

    (warning,) = _messages(admin_client.get(reverse(CHANGELIST)))
    assert warning.startswith("No task worker has ever been seen, and 1 document is waiting")
    assert "python manage.py worker" in warning

    identity = WorkerIdentity("w1", "host-a", 123, timezone.now())
    worker_beat(identity=identity, current_task="")
    assert _messages(admin_client.get(reverse(CHANGELIST))) == []


def test_a_stale_heartbeat_says_how_long_ago_a_worker_was_seen(
    admin_client: Client, settings: LazySettings
) -> None:
    settings.RAG_WORKER_STALE_S = 60
    DocumentFactory.create(status=DocumentStatus.PENDING, queued_at=timezone.now())
    worker_beat(identity=WorkerIdentity("w1", "h", 1, timezone.now()), current_task="")
    from ragplatform.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update(last_seen_at=timezone.now() - timedelta(minutes=10))

    (warning,) = _messages(admin_client.get(reverse(CHANGELIST)))
    assert warning.startswith("No task worker has been seen for 10\xa0minutes")


def test_no_warning_when_nothing_waits(admin_client: Client) -> None:
    DocumentFactory.create(status=DocumentStatus.READY)
    assert _messages(admin_client.get(reverse(CHANGELIST))) == []


# --- The progress view -------------------------------------------------------------------------


def test_progress_view_returns_fresh_cells_for_the_listed_documents(admin_client: Client) -> None:
    moving = DocumentFactory.create(status=DocumentStatus.PROCESSING, progress=40)
    failed = DocumentFactory.create(status=DocumentStatus.FAILED, error_message="Broken file")

    response = admin_client.get(
        reverse("admin:corpus_document_progress"), {"ids": f"{moving.pk},{failed.pk}"}
    )

    assert response.status_code == 200
    body = json.loads(response.content)
    rows = {row["id"]: row for row in body["documents"]}
    assert body["active"] is True
    assert 'value="40"' in rows[moving.pk]["cells"]["progress_bar"]
    assert "Processing" in rows[moving.pk]["cells"]["status_badge"]
    assert "Broken file" in rows[failed.pk]["cells"]["failure_reason"]
    # Every column the list shows but the link, so a finished document's chunks are not stale.
    assert ">0</a>" in rows[moving.pk]["cells"]["chunks_link"]
    assert {"collection", "size", "language", "updated_at"} <= set(rows[moving.pk]["cells"])
    assert "name" not in rows[moving.pk]["cells"]

    Document.objects.filter(pk=moving.pk).update(status=DocumentStatus.READY, progress=100)
    again = admin_client.get(reverse("admin:corpus_document_progress"), {"ids": str(moving.pk)})
    assert json.loads(again.content)["active"] is False


def test_progress_view_shows_only_documents_the_admin_user_may_see(client: Client) -> None:
    hidden = DocumentFactory.create(status=DocumentStatus.PROCESSING)
    editor = User.objects.create_user("editor", password="x", is_staff=True)
    editor.user_permissions.add(Permission.objects.get(codename="view_document"))
    client.force_login(editor)

    response = client.get(reverse("admin:corpus_document_progress"), {"ids": str(hidden.pk)})

    assert response.status_code == 200
    assert json.loads(response.content)["documents"] == []


@pytest.mark.parametrize("ids", ["1,x", "-1", ",".join(["1"] * 501)])
def test_progress_view_refuses_malformed_ids(admin_client: Client, ids: str) -> None:
    response = admin_client.get(reverse("admin:corpus_document_progress"), {"ids": ids})
    assert response.status_code == 400
    error = json.loads(response.content)["error"]
    assert error["code"] == "invalid_request" and "ids must be" in error["message"]


def test_a_ready_document_queued_again_keeps_the_list_watching(admin_client: Client) -> None:
    document = DocumentFactory.create(status=DocumentStatus.READY)
    Document.objects.filter(pk=document.pk).update(queued_at=timezone.now())

    response = admin_client.get(
        reverse("admin:corpus_document_progress"), {"ids": str(document.pk)}
    )

    body = json.loads(response.content)
    assert body["active"] is True and body["documents"][0]["status"] == "queued"
    assert 'data-status="queued"' in admin_client.get(reverse(CHANGELIST)).content.decode()
