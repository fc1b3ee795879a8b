"""The corpus admin on the real PostgreSQL: query budgets, the upload page, actions, read-only chunks."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Permission, User
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.corpus.ingestion.services import document_submit
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus
from tests.conftest import CountingEmbedder
from tests.factories import ChunkFactory, CollectionFactory, DocumentFactory

pytestmark = pytest.mark.django_db

MaxQueries = Callable[[int], AbstractContextManager[CaptureQueriesContext]]
OnCommit = Callable[..., AbstractContextManager[list[Callable[[], Any]]]]

# Pinned budgets; they hold for 5 rows and for 20 documents / 50 chunks alike.
COLLECTION_LIST_QUERIES = 5
DOCUMENT_LIST_QUERIES = 10  # + documents waiting, + the latest worker heartbeat
CHUNK_LIST_QUERIES = 4

GUIDE_MD = b"# Leave policy\n\nEmployees take twenty-six days of annual leave a year.\n"
VPN_TXT = b"The VPN uses WireGuard. Ask the help desk for a configuration file.\n"


@pytest.fixture
def immediate_tasks(settings: LazySettings) -> None:
    """Enqueued tasks run at once, as a task worker would shortly after the commit."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def _changelist_queries(client: Client, url: str) -> tuple[int, bytes]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured), response.content


def _budget_holds(
    client: Client, url: str, add_rows: Callable[[], None], budget: int, max_queries: MaxQueries
) -> bytes:
    client.get(url)  # warm-up: the first request of a test pays one-off costs
    few, _ = _changelist_queries(client, url)
    add_rows()
    with max_queries(budget):
        many, content = _changelist_queries(client, url)
    assert many == few, f"{few} queries for 5 rows but {many} for more: a per-row query"
    return content


# --- Changelists -----------------------------------------------------------------------------


def test_collection_changelist_counts_documents_without_a_query_per_row(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:corpus_collection_changelist")
    for collection in CollectionFactory.create_batch(5):
        DocumentFactory.create(collection=collection)

    def add_rows() -> None:
        for collection in CollectionFactory.create_batch(15):
            DocumentFactory.create_batch(2, collection=collection)

    content = _budget_holds(
        admin_client, url, add_rows, COLLECTION_LIST_QUERIES, django_assert_max_num_queries
    )

    assert content.count(b'class="field-documents_link"') == 20
    busy = Collection.objects.order_by("-pk").first()
    assert busy is not None
    link = f'?collection__id__exact={busy.pk}">2</a>'
    assert link.encode() in content


def test_document_changelist_stays_within_budget(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:corpus_document_changelist")
    first, second = CollectionFactory.create_batch(2)
    DocumentFactory.create_batch(5, collection=first)

    def add_rows() -> None:
        DocumentFactory.create_batch(10, collection=first)
        DocumentFactory.create_batch(4, collection=second)
        DocumentFactory.create(
            collection=second, status=DocumentStatus.FAILED, error_message="The file is empty"
        )

    content = _budget_holds(
        admin_client, url, add_rows, DOCUMENT_LIST_QUERIES, django_assert_max_num_queries
    )

    assert content.count(b'class="field-status_badge"') == 20
    assert b'title="The file is empty"' in content and b">Failed</span>" in content
    assert b"Upload documents" in content
    assert reverse("admin:corpus_document_add").encode() not in content


def test_chunk_changelist_stays_within_budget(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:corpus_chunk_changelist")
    ChunkFactory.create_batch(5, document=DocumentFactory.create())

    def add_rows() -> None:
        for document in DocumentFactory.create_batch(5):
            ChunkFactory.create_batch(9, document=document)

    content = _budget_holds(
        admin_client, url, add_rows, CHUNK_LIST_QUERIES, django_assert_max_num_queries
    )

    assert content.count(b'class="field-short_text"') == 50
    chunk = Chunk.objects.first()
    assert chunk is not None
    for page in (url, reverse("admin:corpus_chunk_change", args=[chunk.pk])):
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(page).status_code == 200
        sql = " ".join(q["sql"] for q in captured.captured_queries)
        assert '"corpus_chunk"."embedding"' not in sql  # vectors are never fetched
        assert '"corpus_chunk"."search_vector"' not in sql


def test_document_link_lists_only_its_chunks(admin_client: Client) -> None:
    document = DocumentFactory.create(title="Leave policy")
    ChunkFactory.create_batch(3, document=document)
    ChunkFactory.create_batch(2)

    response = admin_client.get(reverse("admin:corpus_chunk_changelist"), {"document": document.pk})

    assert response.status_code == 200
    assert response.content.count(b'class="field-short_text"') == 3
    assert b"Leave policy" in response.content  # the active filter names the document


# --- Documents: pages and actions -------------------------------------------------------------


def _upload(client: Client, files: list[tuple[str, bytes]], **fields: object) -> Any:
    uploads = [SimpleUploadedFile(name, data) for name, data in files]
    return client.post(reverse("admin:corpus_document_upload"), {"uploads": uploads, **fields})


def _messages(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_upload_processes_good_files_and_reports_the_refused_one(
    admin_client: Client,
    embedder: CountingEmbedder,
    immediate_tasks: None,
    django_capture_on_commit_callbacks: OnCommit,
) -> None:
    collection = CollectionFactory.create()
    files = [("leave.md", GUIDE_MD), ("vpn.txt", VPN_TXT), ("virus.exe", b"MZ\x90\x00")]

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = _upload(
            admin_client, files, collection=collection.pk, domain="HR", document_type="policy"
        )

    assert response.status_code == 302
    assert response["Location"] == reverse("admin:corpus_document_changelist")
    assert _processings_queued(callbacks) == 2
    documents = Document.objects.order_by("filename")
    assert [d.filename for d in documents] == ["leave.md", "vpn.txt"]
    assert all(d.status == DocumentStatus.READY for d in documents), [
        d.error_message for d in documents
    ]
    assert all(d.domain == "HR" and d.document_type == "policy" for d in documents)
    assert embedder.passages_embedded >= 2
    (message,) = _messages(response)
    assert message.startswith("2 queued, 0 unchanged, 1 refused: virus.exe: ")
    assert '".exe" are not supported' in message


def test_upload_twice_reports_unchanged_and_a_new_collection_is_created(
    admin_client: Client, embedder: CountingEmbedder, immediate_tasks: None
) -> None:
    _upload(admin_client, [("leave.md", GUIDE_MD)], new_collection="Handbook")

    response = _upload(
        admin_client, [("leave.md", GUIDE_MD), ("vpn.txt", VPN_TXT)], new_collection="Handbook"
    )

    assert _messages(response)[-1] == "1 queued, 1 unchanged"  # the first upload's is unread
    assert Collection.objects.filter(name="Handbook").count() == 1
    assert Document.objects.filter(collection__name="Handbook").count() == 2


def test_upload_with_a_file_over_the_limit_is_refused_before_it_is_read(
    admin_client: Client, settings: LazySettings, django_capture_on_commit_callbacks: OnCommit
) -> None:
    settings.RAG_MAX_UPLOAD_BYTES = 100
    collection = CollectionFactory.create()
    with django_capture_on_commit_callbacks() as callbacks:
        response = _upload(
            admin_client,
            [("small.txt", b"fine"), ("big.txt", b"a" * 101)],
            collection=collection.pk,
        )

    # The upload handler stopped at the limit, so the batch is refused as a whole.
    assert response.status_code == 200
    errors = response.context["form"].non_field_errors()
    assert "big.txt is larger than the limit of 100\xa0bytes per file" in errors
    assert not callbacks
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, "Choose a collection or name a new one."),
        ({"new_collection": "Other"}, "Choose an existing collection or name a new one, not both."),
    ],
)
def test_upload_form_needs_exactly_one_collection(
    admin_client: Client, fields: dict[str, str], error: str
) -> None:
    collection = CollectionFactory.create()
    if fields:
        fields = {**fields, "collection": str(collection.pk)}

    response = _upload(admin_client, [("leave.md", GUIDE_MD)], **fields)

    assert response.status_code == 200
    assert error in response.content.decode()
    assert not Document.objects.exists()


def test_upload_page_renders_and_needs_the_add_permission(
    admin_client: Client, client: Client
) -> None:
    url = reverse("admin:corpus_document_upload")
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b'type="file" name="uploads" multiple' in page.content
    assert b'enctype="multipart/form-data"' in page.content

    staff = User.objects.create_user("editor", password="x", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_document"))
    client.force_login(staff)
    assert client.get(url).status_code == 403
    listing = client.get(reverse("admin:corpus_document_changelist"))
    assert listing.status_code == 200 and b"Upload documents" not in listing.content

    staff.user_permissions.add(Permission.objects.get(codename="add_document"))
    staff = User.objects.get(pk=staff.pk)  # drop the cached permissions
    client.force_login(staff)
    assert client.get(url).status_code == 200


def test_add_form_is_replaced_by_the_upload_page(admin_client: Client) -> None:
    assert admin_client.get(reverse("admin:corpus_document_add")).status_code == 403


def test_reprocess_action_enqueues_and_processes_each_document(
    admin_client: Client,
    embedder: CountingEmbedder,
    immediate_tasks: None,
    django_capture_on_commit_callbacks: OnCommit,
) -> None:
    collection = CollectionFactory.create()
    pending = [
        document_submit(collection=collection, filename=name, data=data).document
        for name, data in [("leave.md", GUIDE_MD), ("vpn.txt", VPN_TXT)]
    ]

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post(
            reverse("admin:corpus_document_changelist"),
            {"action": "reprocess", "_selected_action": [d.pk for d in pending]},
        )

    assert response.status_code == 302
    assert _processings_queued(callbacks) == 2
    assert _messages(response) == ["Queued 2 documents for processing."]
    for document in pending:
        document.refresh_from_db()
        assert document.status == DocumentStatus.READY and document.chunk_count >= 1


def _processings_queued(callbacks: list[Callable[[], Any]]) -> int:
    """The processings queued after the commit (each processed document then queues its
    sentence vectors too: answers listens to corpus's `chunks_swapped`)."""
    return sum("document_schedule" in c.__qualname__ for c in callbacks)


def test_document_change_view_links_original_file_and_chunks(admin_client: Client) -> None:
    document = DocumentFactory.create(content=b"# Notes\n\nOriginal bytes.\n", filename="notes.md")
    ChunkFactory.create_batch(2, document=document)

    page = admin_client.get(reverse("admin:corpus_document_change", args=[document.pk]))
    original_url = reverse("admin:corpus_document_original", args=[document.pk])
    download = admin_client.get(original_url)

    assert page.status_code == 200
    assert original_url.encode() in page.content
    assert f"{reverse('admin:corpus_chunk_changelist')}?document={document.pk}".encode() in (
        page.content
    )
    assert b'name="sha256"' not in page.content  # computed fields are read-only
    assert download.status_code == 200
    assert download["Content-Disposition"].startswith("attachment")
    assert b"".join(download.streaming_content) == b"# Notes\n\nOriginal bytes.\n"  # type: ignore[attr-defined]


# --- Chunks -----------------------------------------------------------------------------------


def test_chunk_admin_is_read_only_and_never_shows_the_vector(admin_client: Client) -> None:
    text = "Employees take twenty-six days of annual leave. " * 12
    chunk = ChunkFactory.create(text=text, char_start=10, embedding=[0.123456] + [0.0] * 383)

    page = admin_client.get(reverse("admin:corpus_chunk_change", args=[chunk.pk]))

    assert page.status_code == 200
    body = page.content.decode()
    assert text.strip() in body  # the full text, not the changelist's preview
    assert chunk.content_hash in body and chunk.embedding_model in body
    assert f"10–{chunk.char_end}" in body
    assert "0.123456" not in body
    assert admin_client.get(reverse("admin:corpus_chunk_add")).status_code == 403
    assert (
        admin_client.post(reverse("admin:corpus_chunk_delete", args=[chunk.pk])).status_code == 403
    )
    assert Chunk.objects.filter(pk=chunk.pk).exists()
