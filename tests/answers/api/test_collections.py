"""GET /api/collections/: the collections the user may read (through the one access seam)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from apps.answers.api import views
from apps.corpus.access import collections_readable
from apps.corpus.models import Collection
from tests.factories import CollectionFactory, DocumentFactory

pytestmark = pytest.mark.django_db


def test_lists_the_readable_collections_by_name_with_document_counts(
    api: APIClient, user: User
) -> None:
    it = CollectionFactory.create(name="IT", description="Laptops and VPN")
    DocumentFactory.create_batch(2, collection=it)
    CollectionFactory.create(name="HR")

    body = api.get("/api/collections/").json()

    readable = collections_readable(user=user).order_by("name")
    assert [c["name"] for c in body["results"]] == [c.name for c in readable] == ["HR", "IT"]
    assert body["count"] == 2
    hr, listed_it = body["results"]
    assert hr["document_count"] == 0
    assert listed_it == {
        "id": it.pk,
        "name": "IT",
        "description": "Laptops and VPN",
        "created_at": listed_it["created_at"],
        "document_count": 2,
    }


def test_only_what_the_access_seam_allows(
    api: APIClient, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    CollectionFactory.create(name="IT")
    CollectionFactory.create(name="Board minutes")
    monkeypatch.setattr(
        views, "collections_readable", lambda *, user: Collection.objects.filter(name="IT")
    )

    body = api.get("/api/collections/").json()

    assert [c["name"] for c in body["results"]] == ["IT"]
