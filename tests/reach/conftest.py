"""The doors as their clients meet them: one daphne process serving the platform (fake, fast
providers; tests/stream_server.py) on the test database, a reader with an API token, a
collection they may read and one they may not."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from apps.corpus.models import Collection, Document
from ragplatform.api_tokens import api_token_issue
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder
from tests.processes import Server, servers_env

SECRET = {"salaries.md": "# Salaries\n\nThe board's salaries are 900 gold coins a month each."}
ASKS_PER_MINUTE = 6


@dataclass(frozen=True)
class World:
    user: User
    token: str
    handbook: Collection
    secret: Collection  # private: `user` may not read it

    def secret_document(self) -> Document:
        return Document.objects.get(collection=self.secret)


@pytest.fixture(scope="module")
def server(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    database = str(settings.DATABASES["default"]["NAME"])
    env = servers_env(
        database,
        STREAM_PIECES=3,
        STREAM_PIECE_DELAY_S=0.02,
        RAG_ASKS_PER_MINUTE=ASKS_PER_MINUTE,
    )
    started = Server(env=env, log=tmp_path_factory.mktemp("reach") / "daphne.log").start()
    yield started
    started.stop()


@pytest.fixture
def world(transactional_db: None, django_user_model: type[User]) -> World:
    embedder = CountingEmbedder()
    handbook = handbook_load(embedder)
    secret = handbook_load(embedder, "Board", public=False, documents=SECRET)
    user = django_user_model.objects.create_user("ada", password="a-long-test-password")
    return World(
        user=user, token=api_token_issue(username="ada").key, handbook=handbook, secret=secret
    )
