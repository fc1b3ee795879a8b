"""GET /documents/<id>/source/: the original file for readers of its collection, a 404 with a
message when the stored file is gone (reading it in the page, /read/, says the same)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.corpus.models import Document
from tests.factories import CollectionFactory, DocumentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client: Client) -> Client:
    client.force_login(User.objects.create_user("ada", password="a-long-test-password"))
    return client


def test_the_original_is_downloaded_as_an_attachment(reader: Client) -> None:
    document = DocumentFactory.create(filename="leave.md")
    response = reader.get(f"/documents/{document.pk}/source/")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="leave.md"')


@pytest.mark.parametrize("view", ["source", "read"])
def test_a_missing_file_is_a_404_with_a_message(reader: Client, view: str) -> None:
    document = DocumentFactory.create()
    document.file.storage.delete(document.file.name)
    response = reader.get(f"/documents/{document.pk}/{view}/")
    assert response.status_code == 404
    assert "original file of this document is missing" in response.content.decode()
    Document.objects.filter(pk=document.pk).update(file="")
    assert reader.get(f"/documents/{document.pk}/{view}/").status_code == 404


def test_a_private_collection_is_a_404_like_a_missing_document(reader: Client) -> None:
    hidden = DocumentFactory.create(collection=CollectionFactory.create(public=False))
    assert reader.get(f"/documents/{hidden.pk}/source/").status_code == 404
    assert reader.get("/documents/999999/source/").status_code == 404
