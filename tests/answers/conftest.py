"""Fixtures shared by the answers tests: the transports (WebSocket and SSE), signed-in users,
fake providers and a tiny BEIR-format dataset."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from apps.answers.providers.registry import providers_override
from apps.answers.turn.entry import turns_launched_wait
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder


@pytest.fixture
async def close_db_connections() -> AsyncIterator[None]:
    """The answer's database work runs in asgiref's shared worker thread; close that thread's
    connection afterwards, or the test database cannot be dropped at the end of the run.
    Answers run detached from their clients: let those a test started end first."""
    yield
    await turns_launched_wait(timeout_s=10)
    await sync_to_async(connections.close_all)()


@pytest.fixture
def user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password="a-long-test-password")


@pytest.fixture
def ada(client: Client, user: User) -> Client:
    """A test client signed in as `user`."""
    client.force_login(user)
    return client


@pytest.fixture
def use_providers(embedder: CountingEmbedder) -> Iterator[Callable[..., None]]:
    """The handbook ingested, and fake providers in place of the configured ones; call the
    yielded function to swap in another composer."""
    handbook_load(embedder)
    with ExitStack() as stack:

        def use(composer: ScriptedComposer | None = None) -> None:
            stack.enter_context(providers_override(providers_fake(embedder, composer=composer)))

        use()
        yield use


CORPUS = [
    {"_id": "d1", "title": "Leave", "text": "Employees take twenty-six days of annual leave."},
    {"_id": "d2", "title": "VPN", "text": "The VPN uses WireGuard; import the profile."},
    {"_id": "d3", "title": "Expenses", "text": "Travel expenses are refunded within ten days."},
]


QUERIES = [
    {"_id": "q1", "text": "annual leave days", "answers": ["twenty-six"], "is_impossible": False},
    {
        "_id": "q2",
        "text": "WireGuard VPN profile",
        "answers": ["WireGuard"],
        "is_impossible": False,
    },
    {"_id": "q3", "text": "parking garage opening hours", "answers": [], "is_impossible": True},
]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A tiny BEIR-format dataset: three documents, two answerable queries and one that is not."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in CORPUS))
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES))
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return folder
