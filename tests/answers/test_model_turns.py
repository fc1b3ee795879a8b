"""A turn answered by a slow chat model, as issue 24 found it: a caller that waits is never
abandoned, and a turn that ends early keeps what its followers were sent. A scripted
OpenAI-compatible server stands in for the model where the timing must be exact."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections
from rest_framework.test import APIClient

from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.events import Envelope
from apps.answers.models import Citation, Conversation, Turn, TurnStatus
from apps.answers.providers.registry import providers_override
from apps.answers.turn.entry import turn_events
from apps.answers.turn.leases import turn_cancel_request
from apps.answers.turn.services import turn_start
from apps.corpus.search.legs import SearchFilters
from tests.answers.chat_server import dribbling, slow_model, threaded_server
from tests.answers.fakes import handbook_load, providers_fake
from tests.answers.turns import QUESTION, chat_model
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db(transaction=True)

# The handbook's answer in small pieces, as a model writes it.
SLOW_ANSWER = [
    "Employees take ",
    "twenty-six days ",
    "of annual leave ",
    "a year [c1]. ",
    "Leave requests ",
    "go to your ",
    "manager [c1].",
]


@pytest.fixture
def slow_answers(embedder: CountingEmbedder, settings: LazySettings) -> Iterator[None]:
    """The handbook, a model writing its answer over about three seconds, and an abandonment
    limit far shorter than that (renewed often enough to notice)."""
    settings.RAG_TURN_ABANDON_S, settings.RAG_TURN_LEASE_S = 1.0, 0.6
    handbook_load(embedder)
    with threaded_server(dribbling(SLOW_ANSWER, delay_s=0.45)) as url:
        composer = OpenAIComposer(chat_model(url, "slow"), timeout_s=30)
        with providers_override(replace(providers_fake(embedder), composer=composer)):
            yield
    asyncio.run(sync_to_async(connections.close_all)())


# --- 1. whoever waits for the answer follows it --------------------------------------------


def test_an_answer_asked_at_the_command_line_is_not_abandoned_while_it_is_read(
    slow_answers: None,
) -> None:
    out = StringIO()
    call_command("ask", QUESTION, "--json", stdout=out)

    events = [json.loads(line) for line in out.getvalue().splitlines()]
    # Before: cancelled after RAG_TURN_ABANDON_S, mid-answer, though `ask` was reading it.
    assert events[-1]["type"] == "finished", events[-1]
    assert Turn.objects.get().status == TurnStatus.FINISHED


def test_an_answer_asked_through_the_json_endpoint_is_not_abandoned(
    slow_answers: None, user: User
) -> None:
    api = APIClient()
    api.force_authenticate(user)

    response = api.post("/api/answers/", {"question": QUESTION}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "finished"
    assert "twenty-six days" in response.json()["answer"]


# --- 2. a turn that ends early keeps what was shown --------------------------------------


async def test_a_cancelled_answer_keeps_its_text_and_citations_marked_partial(
    embedder: CountingEmbedder, close_db_connections: None
) -> None:
    await sync_to_async(handbook_load)(embedder)
    turn = await sync_to_async(turn_start)(
        conversation=await Conversation.objects.acreate(), question=QUESTION
    )
    received: list[Envelope] = []
    async with slow_model(dribbling(SLOW_ANSWER, delay_s=0.3)) as url:
        composer = OpenAIComposer(chat_model(url, "slow"), timeout_s=30)
        with providers_override(replace(providers_fake(embedder), composer=composer)):
            async with asyncio.timeout(20):
                async for envelope in turn_events(turn_id=turn.pk, filters=SearchFilters()):
                    received.append(envelope)
                    if envelope["type"] == "citation":
                        await sync_to_async(turn_cancel_request)(turn_id=turn.pk)

    assert received[-1]["type"] == "failed" and received[-1]["data"]["code"] == "cancelled"
    shown = "".join(e["data"]["text"] for e in received if e["type"] == "token")
    stored = await Turn.objects.aget(pk=turn.pk)
    # Before: the stored turn had an empty answer and no citations.
    assert stored.status == TurnStatus.CANCELLED and "twenty-six days" in shown
    assert stored.answer == shown and stored.partial
    aliases = [c.alias async for c in Citation.objects.filter(turn=turn)]
    assert aliases == ["c1"]
