"""Clients for the REST API tests: one signed in by session, one by token, one anonymous."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient


@pytest.fixture
def api(user: User) -> APIClient:
    """Signed in with a session, as the browser is (CSRF is checked where the test asks)."""
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def other(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("grace", password="another-test-password")
