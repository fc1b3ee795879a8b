"""`manage.py ask --json`, as the README and the guide show it: one JSON event per line."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from django.db import connections

from apps.answers.models import Turn, TurnClient
from apps.answers.providers.registry import providers_override
from tests.answers.fakes import handbook_load, providers_fake
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fake_providers(embedder: CountingEmbedder) -> Iterator[None]:
    handbook_load(embedder)
    with providers_override(providers_fake(embedder)):
        yield
    # The command's database work ran in asgiref's worker thread: close that connection too,
    # or the test database cannot be dropped at the end of the run.
    asyncio.run(sync_to_async(connections.close_all)())


def test_ask_json_prints_one_event_per_line_ending_finished(fake_providers: None) -> None:
    out = StringIO()
    call_command(
        "ask", "How many days of annual leave?", "--json", "--collection", "Handbook", stdout=out
    )

    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[0]["type"] == "classification"
    assert events[-1]["type"] == "finished"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert Turn.objects.get().status == "finished"
    assert Turn.objects.get().client == TurnClient.COMMAND


def test_ask_refuses_an_unknown_collection(fake_providers: None) -> None:
    with pytest.raises(CommandError, match="No collection named 'Nowhere'"):
        call_command("ask", "Anything?", "--collection", "Nowhere", stdout=StringIO())
