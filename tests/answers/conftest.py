"""Fixtures shared by the transport tests (WebSocket and SSE)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections

from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder


@pytest.fixture
async def close_db_connections() -> AsyncIterator[None]:
    """The answer's database work runs in asgiref's shared worker thread; close that thread's
    connection afterwards, or the test database cannot be dropped at the end of the run."""
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password="a-long-test-password")


@pytest.fixture
def use_providers(
    monkeypatch: pytest.MonkeyPatch, embedder: CountingEmbedder
) -> Callable[..., None]:
    """The handbook ingested, and fake providers in place of the configured ones; call the
    returned function to swap in another composer."""
    handbook_load(embedder)

    def use(composer: ScriptedComposer | None = None) -> None:
        fake = providers_fake(embedder, composer=composer)
        monkeypatch.setattr("apps.answers.providers.registry.providers_default", lambda: fake)

    use()
    return use
