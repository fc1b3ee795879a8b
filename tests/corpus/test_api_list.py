"""GET /api/documents/ is paginated like every other list of the API."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db


def test_the_document_list_is_paginated() -> None:
    DocumentFactory.create_batch(3)
    client = APIClient()
    client.force_authenticate(User.objects.create_user("reader", password="x"))

    body = client.get("/api/documents/", {"page_size": 2}).json()

    assert body["count"] == 3 and len(body["results"]) == 2 and body["next"]
    assert {"id", "filename", "status", "status_url"} <= set(body["results"][0])
