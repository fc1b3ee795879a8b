"""POST /api/turns/ (SSE) and GET /api/turns/<id>/events (replay), through Django's AsyncClient."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.test import AsyncClient

from apps.answers.models import Conversation, Turn, TurnClient, TurnStatus
from apps.answers.turn.entry import turn_events
from apps.answers.turn.outcomes import TurnFailed
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import turn_end, turn_start
from apps.corpus.search.legs import SearchFilters
from ragplatform.errors import FailureCode
from tests.answers.fakes import ANSWER_TEXT, ScriptedComposer
from tests.answers.sse import REJECTED, SSE, ask, frames

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]


@pytest.fixture
async def client(user: User) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(user)
    return client


async def test_post_streams_every_envelope_in_order(
    client: AsyncClient, use_providers: Callable[..., None]
) -> None:
    response = await ask(client, {"question": "How many days of leave?"}, **SSE)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    turn_id = int(response["X-Turn-Id"])
    parsed = await frames(response)

    envelopes = [f["data"] for f in parsed]
    assert [f["id"] for f in parsed] == [str(e["seq"]) for e in envelopes]
    assert [f["event"] for f in parsed] == [e["type"] for e in envelopes]
    assert [e["seq"] for e in envelopes] == list(range(1, len(envelopes) + 1))
    assert envelopes[0]["type"] == "classification" and envelopes[-1]["type"] == "finished"
    assert {e["turn"] for e in envelopes} == {turn_id}
    assert "".join(e["data"]["text"] for e in envelopes if e["type"] == "token") == ANSWER_TEXT
    assert envelopes == [dict(e) for e in await sync_to_async(turn_events_since)(turn_id=turn_id)]
    turn = await Turn.objects.select_related("conversation").aget(pk=turn_id)
    assert str(turn.conversation_id) == response["X-Conversation-Id"]
    assert turn.client == TurnClient.SSE


async def test_a_second_question_continues_the_conversation(
    client: AsyncClient, use_providers: Callable[..., None]
) -> None:
    first = await ask(client, {"question": "How many days of leave?"}, **SSE)
    await frames(first)
    conversation = first["X-Conversation-Id"]
    second = await ask(client, {"question": "And the VPN?", "conversation": conversation}, **SSE)
    await frames(second)
    assert second["X-Conversation-Id"] == conversation
    turn = await Turn.objects.aget(pk=int(second["X-Turn-Id"]))
    assert turn.index == 2


async def test_without_the_event_stream_accept_header_it_is_406(
    client: AsyncClient, use_providers: Callable[..., None]
) -> None:
    response = await ask(client, {"question": "How many days of leave?"}, Accept="application/json")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"
    assert await Turn.objects.acount() == 0


@pytest.mark.parametrize(("body", "status", "code"), REJECTED)
async def test_bad_requests_get_a_json_error(
    client: AsyncClient,
    body: object,
    status: int,
    code: str,
) -> None:
    response = await ask(client, body, **SSE)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert await Turn.objects.acount() == 0


async def test_malformed_json_is_400(client: AsyncClient) -> None:
    response = await client.post(
        "/api/turns/", data="{oops", content_type="application/json", headers=SSE
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"


async def test_anonymous_gets_401(use_providers: Callable[..., None]) -> None:
    response = await ask(AsyncClient(), {"question": "How many days of leave?"}, **SSE)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


async def test_a_session_post_without_csrf_token_is_refused(user: User) -> None:
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(user)
    response = await ask(client, {"question": "How many days of leave?"}, **SSE)
    assert response.status_code == 403


async def test_events_replay_after_last_seq_and_header(
    client: AsyncClient, use_providers: Callable[..., None], django_user_model: type[User]
) -> None:
    response = await ask(client, {"question": "How many days of leave?"}, **SSE)
    everything = [f["data"] for f in await frames(response)]
    url = f"/api/turns/{response['X-Turn-Id']}/events"

    replay = await client.get(url, {"last_seq": 3}, headers=SSE)
    assert [f["data"] for f in await frames(replay)] == everything[3:]
    by_header = await client.get(url, headers={**SSE, "Last-Event-ID": "5"})
    assert [f["data"] for f in await frames(by_header)] == everything[5:]

    # Superscript and Arabic-Indic digits pass str.isdigit(), and int() takes the latter.
    for odd in ["-1", "²", "١٢", "9" * 5000, " ", "1e3"]:
        refused = await client.get(url, {"last_seq": odd}, headers=SSE)
        assert refused.status_code == 400, odd
        assert "last_seq" in json.loads(refused.content)["error"]["message"]
    odd_header = await client.get(url, headers={**SSE, "Last-Event-ID": "²"})
    assert odd_header.status_code == 400
    assert (await client.get(url)).status_code == 406
    stranger = await sync_to_async(django_user_model.objects.create_user)(
        "eve", password="x-long-pass"
    )
    other = AsyncClient()
    await other.aforce_login(stranger)
    assert (await other.get(url, headers=SSE)).status_code == 404


async def test_following_an_ended_turn_from_past_its_end_gets_its_terminal_event_at_once(
    client: AsyncClient, user: User, use_providers: Callable[..., None]
) -> None:
    response = await ask(client, {"question": "How many days of leave?"}, **SSE)
    finished = [f["data"] for f in await frames(response)][-1]
    conversation = await Conversation.objects.acreate(user=user)
    turn = await sync_to_async(turn_start)(conversation=conversation, question="Leave days?")
    failure = TurnFailed(code=FailureCode.INTERNAL, message="Something went wrong")
    failed = await sync_to_async(turn_end)(turn_id=turn.pk, seq=1, outcome=failure)
    for end in (finished, failed):
        url = f"/api/turns/{end['turn']}/events"
        for last_seq in (end["seq"], end["seq"] + 1, 99999):
            # A short timeout: a stream that keeps pinging for events that never come fails.
            async with asyncio.timeout(5):
                replay = await client.get(url, {"last_seq": last_seq}, headers=SSE)
                assert [f["data"] for f in await frames(replay)] == [dict(end)]


async def test_events_follow_a_turn_that_is_still_streaming(
    client: AsyncClient, user: User, use_providers: Callable[..., None]
) -> None:
    use_providers(ScriptedComposer(pieces=[f"Part {i} [c1]. " for i in range(6)], delay_s=0.1))
    conversation = await Conversation.objects.acreate(user=user)
    turn = await sync_to_async(turn_start)(conversation=conversation, question="Leave days?")
    # The answer runs elsewhere (another process, in production); here, a task.
    running = asyncio.create_task(_drain(turn_events(turn_id=turn.pk, filters=SearchFilters())))
    await asyncio.sleep(0.05)
    response = await client.get(f"/api/turns/{turn.pk}/events", {"last_seq": 0}, headers=SSE)
    followed = [f["data"] for f in await frames(response)]
    await running

    assert followed[-1]["type"] == "finished"
    assert [e["seq"] for e in followed] == list(range(1, len(followed) + 1))
    assert (await Turn.objects.aget(pk=turn.pk)).status == TurnStatus.FINISHED


async def _drain(events: AsyncIterator[Any]) -> None:
    async for _ in events:
        pass


async def test_a_turn_events_generator_closed_mid_answer_ends_the_turn_as_cancelled(
    user: User, use_providers: Callable[..., None]
) -> None:
    # `turn_events` itself (the REST API, `manage.py ask`): closing it is stopping the turn.
    use_providers(ScriptedComposer(pieces=[f"Part {i} [c1]. " for i in range(6)], delay_s=0.1))
    conversation = await Conversation.objects.acreate(user=user)
    turn = await sync_to_async(turn_start)(conversation=conversation, question="Leave days?")
    events = turn_events(turn_id=turn.pk, filters=SearchFilters())
    async for envelope in events:
        if envelope["type"] == "token":
            break
    await events.aclose()  # type: ignore[attr-defined]

    stored = await sync_to_async(turn_events_since)(turn_id=turn.pk)
    assert [e["type"] for e in stored].count("failed") == 1
    assert stored[-1]["data"]["code"] == "cancelled"
    assert (await Turn.objects.aget(pk=turn.pk)).status == TurnStatus.CANCELLED


async def test_an_sse_client_that_goes_away_cancels_nothing_and_resumes_later(
    client: AsyncClient, use_providers: Callable[..., None]
) -> None:
    use_providers(ScriptedComposer(pieces=[f"Part {i} [c1]. " for i in range(8)], delay_s=0.1))
    response = await ask(client, {"question": "How many days of leave?"}, **SSE)
    turn_id = int(response["X-Turn-Id"])
    got_one = asyncio.Event()

    async def read() -> None:
        async for _chunk in response.streaming_content:
            got_one.set()

    # What the server does when the client disconnects: it cancels the streaming task.
    reading = asyncio.create_task(read())
    await asyncio.wait_for(got_one.wait(), timeout=5)
    reading.cancel()
    await asyncio.wait({reading})

    async with asyncio.timeout(10):
        while (await Turn.objects.aget(pk=turn_id)).status == TurnStatus.STREAMING:
            await asyncio.sleep(0.05)
    assert (await Turn.objects.aget(pk=turn_id)).status == TurnStatus.FINISHED
    resumed = await client.get(f"/api/turns/{turn_id}/events", {"last_seq": 1}, headers=SSE)
    replayed = [f["data"] for f in await frames(resumed)]
    assert [e["seq"] for e in replayed] == list(range(2, replayed[-1]["seq"] + 1))
    assert replayed[-1]["type"] == "finished"


async def test_an_idle_sse_stream_sends_ping_comments(
    client: AsyncClient, use_providers: Callable[..., None], settings: LazySettings
) -> None:
    settings.RAG_KEEPALIVE_S = 0.05
    use_providers(ScriptedComposer(pieces=["Part one [c1]. ", "Part two [c1]."], delay_s=0.3))
    response = await ask(client, {"question": "How many days of leave?"}, **SSE)
    body = b"".join([chunk async for chunk in response.streaming_content]).decode()
    blocks = body.removesuffix("\n\n").split("\n\n")
    assert ": ping" in blocks
    events = [b for b in blocks if b != ": ping"]
    assert events[-1].startswith("id: ") and "event: finished" in events[-1]


async def test_a_stream_cut_off_by_the_database_ends_with_a_typed_unavailable_event(
    client: AsyncClient, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    from apps.answers.web import views

    conversation = await Conversation.objects.acreate(user=user)
    turn = await sync_to_async(turn_start)(conversation=conversation, question="Leave days?")

    async def cut_off(**kwargs: Any) -> Any:
        raise OperationalError("consuming input failed: server closed the connection")
        yield  # an async generator, as turn_follow is

    monkeypatch.setattr(views, "turn_follow", cut_off)
    async with asyncio.timeout(5):  # it ends: not left open and silent
        response = await client.get(f"/api/turns/{turn.pk}/events", headers=SSE)
        body = b"".join([c async for c in response.streaming_content]).decode()  # type: ignore[attr-defined]

    # No `id:` line: an EventSource keeps its Last-Event-ID and resumes from there.
    assert body.startswith("event: failed\ndata: ") and "\nid:" not in body
    envelope = json.loads(body.removeprefix("event: failed\ndata: "))
    assert envelope["seq"] == 0 and envelope["data"]["code"] == "unavailable"
