"""Two daphne processes on one PostgreSQL (the test database): an answer survives its client
and its process. Slow-ish (they start real servers), so few, but part of every run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User

from apps.answers.models import Turn, TurnStatus
from apps.answers.turn.selectors import turn_events_since
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder
from tests.processes import (
    Envelope,
    Server,
    servers_env,
    session_cookie,
    socket_next,
    socket_to,
    sse_client,
    sse_envelopes,
)

pytestmark = [
    pytest.mark.processes,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]
LEASE_S = 2.0
# A 12-piece answer at 0.25 s a piece: about three seconds, time enough to drop or kill.
SERVER_SETTINGS = {
    "RAG_TURN_LEASE_S": LEASE_S,
    "RAG_TURN_FOLLOW_CHECK_S": 0.5,
    "STREAM_PIECES": 12,
    "STREAM_PIECE_DELAY_S": 0.25,
}


def _start(tmp: Path, name: str, **overrides: object) -> Server:
    database = str(settings.DATABASES["default"]["NAME"])
    env = servers_env(database, **{**SERVER_SETTINGS, **overrides})
    return Server(env=env, log=tmp / f"{name}.log").start()


@pytest.fixture(scope="module")
def pair(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp("daphne")
    first, second = _start(tmp, "a"), _start(tmp, "b")
    yield first, second
    first.stop()
    second.stop()


@pytest.fixture
def cookie(user: User) -> str:
    handbook_load(CountingEmbedder())
    return session_cookie(user)


async def _until(ws: Any, stop: Any) -> list[Envelope]:
    received: list[Envelope] = []
    while not received or not stop(received[-1]):
        received.append(await socket_next(ws))
    return received


def _terminal(envelope: Envelope) -> bool:
    return envelope["type"] in {"finished", "failed"} and envelope["seq"] > 0


async def test_ask_on_one_drop_and_resume_on_the_other_gets_every_event_once(
    pair: tuple[Server, Server], cookie: str
) -> None:
    first, second = pair
    async with socket_to(first, cookie) as ws:
        await ws.send('{"type": "ask", "question": "How many days of leave?"}')
        seen = await _until(ws, lambda e: e["type"] == "token" and e["seq"] >= 3)
    turn_id, last_seq = seen[0]["turn"], seen[-1]["seq"]
    await asyncio.sleep(0.6)  # the answer goes on while nobody is connected
    async with socket_to(second, cookie) as ws:
        await ws.send(f'{{"type": "resume", "turn": {turn_id}, "last_seq": {last_seq}}}')
        rest = await _until(ws, _terminal)

    received = seen[1:] + rest
    assert [e["seq"] for e in received] == list(range(1, received[-1]["seq"] + 1))
    assert received[-1]["type"] == "finished"
    stored = await sync_to_async(turn_events_since)(turn_id=turn_id)
    assert received == [dict(e) for e in stored]


async def test_an_sse_client_that_disconnects_does_not_cancel_the_answer(
    pair: tuple[Server, Server], cookie: str
) -> None:
    first, _ = pair
    async with (
        sse_client(first, cookie) as client,
        client.stream("POST", "/api/turns/", json={"question": "How many days of leave?"}) as r,
    ):
        assert r.status_code == 200
        turn_id = int(r.headers["X-Turn-Id"])
        async for envelope in sse_envelopes(r):
            if envelope["type"] == "token":
                break  # and close the connection mid-answer
    async with asyncio.timeout(20):
        while (await Turn.objects.aget(pk=turn_id)).status == TurnStatus.STREAMING:
            await asyncio.sleep(0.1)
    assert (await Turn.objects.aget(pk=turn_id)).status == TurnStatus.FINISHED
    stored = await sync_to_async(turn_events_since)(turn_id=turn_id)
    assert [e["type"] for e in stored].count("token") >= 6  # the whole answer was written


async def test_a_killed_answering_process_ends_followers_with_interrupted_and_the_partial_text(
    pair: tuple[Server, Server], cookie: str, tmp_path: Path
) -> None:
    _, follower_side = pair
    doomed = _start(tmp_path, "doomed", STREAM_PIECES=60)  # 15 s: killed well before its end
    killed_at = ended_after = None
    try:
        async with socket_to(doomed, cookie) as ws:
            await ws.send('{"type": "ask", "question": "How many days of leave?"}')
            seen = await _until(ws, lambda e: e["type"] == "token" and e["seq"] >= 3)
        turn_id = seen[0]["turn"]
        async with (
            sse_client(follower_side, cookie) as client,
            client.stream("GET", f"/api/turns/{turn_id}/events", params={"last_seq": 0}) as r,
        ):
            followed: list[Envelope] = []
            async for envelope in sse_envelopes(r):
                followed.append(envelope)
                if envelope["type"] == "token" and killed_at is None:
                    doomed.kill()
                    killed_at = time.monotonic()
        if killed_at is not None:
            ended_after = time.monotonic() - killed_at
    finally:
        doomed.kill()

    assert followed[-1]["type"] == "failed"
    assert followed[-1]["data"]["code"] == "interrupted" and followed[-1]["data"]["retryable"]
    assert (
        ended_after is not None and ended_after < LEASE_S + 3
    )  # within the lease (and a follower's check) of the kill
    assert [e["seq"] for e in followed] == list(range(1, followed[-1]["seq"] + 1))
    partial = "".join(e["data"]["text"] for e in followed if e["type"] == "token")
    turn = await Turn.objects.aget(pk=turn_id)
    assert turn.status == TurnStatus.FAILED and turn.partial
    assert turn.answer == partial and partial.startswith("Employees take")


async def test_a_process_stopped_with_sigterm_ends_its_answers_as_interrupted_keeping_the_text(
    pair: tuple[Server, Server], cookie: str, tmp_path: Path
) -> None:
    # A restart is not a user cancelling: the answer ends retryable, as after a crash.
    stopping = _start(tmp_path, "stopping", STREAM_PIECES=60)  # 15 s: stopped well before
    try:
        async with socket_to(stopping, cookie) as ws:
            await ws.send('{"type": "ask", "question": "How many days of leave?"}')
            seen = await _until(ws, lambda e: e["type"] == "token" and e["seq"] >= 3)
        await asyncio.to_thread(stopping.stop)  # SIGTERM, and wait for the process to exit
        assert stopping.process is not None and stopping.process.returncode is not None
    finally:
        stopping.kill()

    # Ended by the process on its way out, not left for a lease to lapse.
    turn = await Turn.objects.aget(pk=seen[0]["turn"])
    assert turn.status == TurnStatus.FAILED and turn.error_code == "interrupted"
    assert turn.partial and turn.answer.startswith("Employees take")
    stored = await sync_to_async(turn_events_since)(turn_id=turn.pk)
    assert stored[-1]["type"] == "failed" and stored[-1]["data"]["retryable"]
    tokens = "".join(e["data"]["text"] for e in stored if e["type"] == "token")
    assert turn.answer == tokens
