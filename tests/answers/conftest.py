"""Fixtures shared by the transport tests (WebSocket and SSE)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections


@pytest.fixture
async def close_db_connections() -> AsyncIterator[None]:
    """The answer's database work runs in asgiref's shared worker thread; close that thread's
    connection afterwards, or the test database cannot be dropped at the end of the run."""
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password="a-long-test-password")
