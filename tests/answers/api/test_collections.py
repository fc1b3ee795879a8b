"""GET /api/collections/: the collections the user may read (through the one access seam)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from apps.corpus.access import collections_readable
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


def test_only_what_the_access_rules_allow(api: APIClient, user: User) -> None:
    readers = Group.objects.create(name="IT staff")
    readers.user_set.add(user)
    CollectionFactory.create(name="IT", public=False).reader_groups.add(readers)
    CollectionFactory.create(name="Board minutes", public=False)

    body = api.get("/api/collections/").json()

    assert [c["name"] for c in body["results"]] == ["IT"]
