"""Reading a document in the page (its text, never the file) and one chunk with its
neighbours, for readers of its collection only; anyone else gets the 404 of a missing one."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Document
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory, DocumentFactory

pytestmark = pytest.mark.django_db

HOSTILE_HTML = (
    b"<html><head><title>Expenses</title></head><body><h1>Expenses</h1>"
    b"<p>Receipts are kept for <b>seven</b> years.</p><script>alert(1)</script>"
    b'<p>Refunds arrive in ten days.<img src=x onerror="alert(2)"></p></body></html>'
)


@pytest.fixture
def reader(client: Client) -> Client:
    client.force_login(User.objects.create_user("ada", password="a-long-test-password"))
    return client


def _ingested(embedder: CountingEmbedder, filename: str, data: bytes, **kw: object) -> Document:
    collection = CollectionFactory.create(**kw)
    document = document_submit(collection=collection, filename=filename, data=data).document
    document_process(document_id=document.pk, embedder=embedder)
    document.refresh_from_db()
    return document


def test_html_is_read_as_text_in_the_page_with_the_cited_chunk_marked(
    reader: Client, embedder: CountingEmbedder
) -> None:
    document = _ingested(embedder, "expenses.html", HOSTILE_HTML)
    response = reader.get(f"/documents/{document.pk}/read/?chunk=0")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert "Content-Disposition" not in response
    page = response.content.decode()
    assert "Receipts are kept for seven years." in page
    assert "<script>alert" not in page and "<img" not in page and "<b>" not in page
    assert 'id="cited"' in page and 'class="text cited"' in page
    assert f'href="/documents/{document.pk}/source/" download' in page


def test_a_chunk_comes_with_links_to_its_neighbours(
    reader: Client, embedder: CountingEmbedder
) -> None:
    long_text = "\n\n".join(f"Paragraph {n}. " + "Leave rules apply here. " * 30 for n in range(6))
    document = _ingested(embedder, "leave.md", f"# Leave\n\n{long_text}".encode())
    assert document.chunk_count >= 3
    first = reader.get(f"/documents/{document.pk}/chunks/0/").json()
    assert first["previous_url"] is None
    assert first["next_url"] == f"/documents/{document.pk}/chunks/1/"
    second = reader.get(first["next_url"]).json()
    assert second["index"] == 1 and "Paragraph 1." in second["text"]
    assert second["previous_url"] == f"/documents/{document.pk}/chunks/0/"
    last = document.chunk_count - 1
    assert reader.get(f"/documents/{document.pk}/chunks/{last}/").json()["next_url"] is None
    assert reader.get(f"/documents/{document.pk}/chunks/{last + 1}/").status_code == 404


def test_an_unreadable_document_is_a_404_like_a_missing_one(
    reader: Client, embedder: CountingEmbedder
) -> None:
    hidden = _ingested(embedder, "board.md", b"# Board\n\nSecret minutes.", public=False)
    for url in (
        f"/documents/{hidden.pk}/read/",
        f"/documents/{hidden.pk}/chunks/0/",
        "/documents/999999/read/",
        "/documents/999999/chunks/0/",
    ):
        response = reader.get(url)
        assert response.status_code == 404
        assert b"Secret" not in response.content


def test_reading_needs_a_login(client: Client) -> None:
    document = DocumentFactory.create()
    assert client.get(f"/documents/{document.pk}/read/").status_code == 302
    # The preview panel's JSON: a 401 it can act on, not the login page.
    assert client.get(f"/documents/{document.pk}/chunks/0/").status_code == 401
