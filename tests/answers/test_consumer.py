"""The chat WebSocket, driven by channels' WebsocketCommunicator against the real database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import LazySettings
from django.contrib.auth.models import AnonymousUser, User

from apps.answers.models import Turn, TurnClient, TurnStatus
from apps.answers.turn.selectors import turn_events_since
from apps.answers.web import consumers
from ragplatform.routing import websocket_urlpatterns
from tests.answers.fakes import ANSWER_TEXT, ScriptedComposer
from tests.answers.sockets import (
    TERMINAL,
    Envelope,
    connected,
    receive_until,
    terminal,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]


@pytest.fixture
def slow() -> ScriptedComposer:
    # Ten pieces, 0.15 s apart: long enough to cancel or drop the socket in the middle.
    return ScriptedComposer(
        pieces=[f"Sentence {i} of the answer [c1]. " for i in range(10)], delay_s=0.15
    )


async def stored(turn_id: int) -> list[Envelope]:
    return [dict(e) for e in await sync_to_async(turn_events_since)(turn_id=turn_id, last_seq=0)]


async def turn_of(turn_id: int) -> Turn:
    return await Turn.objects.aget(pk=turn_id)


async def test_anonymous_is_closed_with_4401() -> None:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/chat/")
    communicator.scope["user"] = AnonymousUser()
    await communicator.connect()
    assert await communicator.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}


async def test_ask_streams_a_cited_answer_and_stores_every_event(
    user: User, use_providers: Callable[..., None]
) -> None:
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    received = await receive_until(communicator, terminal)
    await communicator.disconnect()

    accepted, events = received[0], received[1:]
    assert accepted["type"] == "accepted" and accepted["seq"] == 0
    turn_id = accepted["turn"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events][:3] == ["classification", "progress", "token"]
    assert events[1]["data"] == {"stage": "writing"}
    assert [e["type"] for e in events][-3:] == ["confidence", "followups", "finished"]
    assert "".join(e["data"]["text"] for e in events if e["type"] == "token") == ANSWER_TEXT
    citations = [e["data"] for e in events if e["type"] == "citation"]
    assert len(citations) == 1 and citations[0]["alias"] == "c1"
    assert citations[0]["title"] in {"leave", "Leave", "leave.md"}
    assert (await Turn.objects.aget(pk=turn_id)).client == TurnClient.CHAT  # the door, audited
    assert events == await stored(turn_id)
    turn = await turn_of(turn_id)
    assert turn.status == TurnStatus.FINISHED and turn.answer == ANSWER_TEXT
    conversation = await sync_to_async(lambda: turn.conversation)()
    assert accepted["data"]["conversation"] == str(conversation.pk)
    assert conversation.user_id == user.pk


@pytest.mark.parametrize(
    ("message", "expected", "code"),
    [
        ("not json", "JSON", "invalid_request"),
        ([1, 2], "type", "invalid_request"),
        ({"type": "shout"}, "type", "invalid_request"),
        ({"question": "no type"}, "type", "invalid_request"),
        ({"type": "ask", "question": "   "}, "empty", "invalid_request"),
        ({"type": "ask", "question": 42}, "text", "invalid_request"),
        ({"type": "ask", "question": "x" * 101}, "limit", "invalid_request"),
        ({"type": "ask", "question": "Leave?", "collections": ["Nope"]}, "Nope", "invalid_request"),
        (
            {"type": "ask", "question": "Leave?", "collections": "Handbook"},
            "list",
            "invalid_request",
        ),
        (
            {"type": "ask", "question": "Leave?", "conversation": "not-a-uuid"},
            "conversation",
            "invalid_request",
        ),
        (
            {
                "type": "ask",
                "question": "Leave?",
                "conversation": "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
            },
            "No such conversation",
            "not_found",
        ),
        ({"type": "resume", "turn": "7", "last_seq": 0}, "integers", "invalid_request"),
        ({"type": "resume", "turn": 999999, "last_seq": 0}, "No such turn", "not_found"),
    ],
)
async def test_bad_input_gets_a_typed_failed_envelope_and_the_socket_stays_open(
    user: User,
    settings: LazySettings,
    message: object,
    expected: str,
    code: str,
) -> None:
    settings.RAG_MAX_QUESTION_CHARS = 100
    communicator = await connected(user)
    for _ in range(2):  # the second proves the socket survived the first
        if isinstance(message, str):
            await communicator.send_to(text_data=message)
        else:
            await communicator.send_json_to(message)
        reply = await communicator.receive_json_from(timeout=5)
        assert reply["type"] == "failed" and reply["seq"] == 0 and reply["turn"] is None
        assert reply["data"]["code"] == code
        assert expected in reply["data"]["message"]
    assert await sync_to_async(Turn.objects.count)() == 0
    await communicator.disconnect()


async def test_cancel_stops_the_answer_mid_stream(
    user: User, use_providers: Callable[..., None], slow: ScriptedComposer
) -> None:
    use_providers(slow)
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    before = await receive_until(communicator, lambda e: e["type"] == "token")
    await communicator.send_json_to({"type": "cancel"})
    after = await receive_until(communicator, terminal, timeout=5)
    assert after[-1]["type"] == "failed" and after[-1]["data"]["code"] == "cancelled"
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()

    turn_id = before[0]["turn"]
    tokens = [e for e in before + after if e["type"] == "token"]
    assert 1 <= len(tokens) < 10
    events = await stored(turn_id)
    assert [e["type"] for e in events].count("failed") == 1 and events[-1] == after[-1]
    assert not any(e["type"] == "finished" for e in events)
    assert (await turn_of(turn_id)).status == TurnStatus.CANCELLED


async def test_a_new_question_in_the_same_conversation_cancels_the_previous_answer(
    user: User, use_providers: Callable[..., None], slow: ScriptedComposer
) -> None:
    use_providers(slow)
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    first = await receive_until(communicator, lambda e: e["type"] == "token")
    slow.delay_s = 0
    conversation = first[0]["data"]["conversation"]
    await communicator.send_json_to(
        {"type": "ask", "question": "And the VPN?", "conversation": conversation}
    )
    rest = await receive_until(communicator, lambda e: e["type"] == "finished")
    await communicator.disconnect()

    first_turn = first[0]["turn"]
    ended = [e for e in rest if e["turn"] == first_turn and e["type"] in TERMINAL]
    assert [e["data"]["code"] for e in ended] == ["cancelled"]
    accepted = next(e for e in rest if e["type"] == "accepted")
    assert accepted["turn"] != first_turn
    assert rest.index(ended[0]) < rest.index(accepted)  # the old answer ends before the new starts
    assert (await turn_of(first_turn)).status == TurnStatus.CANCELLED
    assert (await turn_of(accepted["turn"])).status == TurnStatus.FINISHED


async def test_a_question_in_another_conversation_leaves_the_previous_answer_running(
    user: User, use_providers: Callable[..., None], slow: ScriptedComposer
) -> None:
    use_providers(slow)
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    first = await receive_until(communicator, lambda e: e["type"] == "token")
    await communicator.send_json_to({"type": "ask", "question": "And the VPN?"})
    rest = await receive_until(communicator, lambda e: e["type"] == "finished", timeout=15)
    await communicator.disconnect()

    first_turn = first[0]["turn"]
    after = rest[next(i for i, e in enumerate(rest) if e["type"] == "accepted") :]
    assert not [e for e in after if e["turn"] == first_turn]  # the socket follows the new one
    async with asyncio.timeout(10):
        while (await turn_of(first_turn)).status == TurnStatus.STREAMING:
            await asyncio.sleep(0.05)
    assert (await turn_of(first_turn)).status == TurnStatus.FINISHED


async def test_resume_after_a_dropped_socket_gets_exactly_the_missed_events(
    user: User, use_providers: Callable[..., None], slow: ScriptedComposer
) -> None:
    use_providers(slow)
    first = await connected(user)
    await first.send_json_to({"type": "ask", "question": "How many days of leave?"})
    seen = await receive_until(first, lambda e: e["type"] == "token" and e["seq"] >= 3)
    await first.disconnect()  # mid-answer: the answer keeps going
    turn_id, last_seq = seen[0]["turn"], seen[-1]["seq"]
    await asyncio.sleep(0.4)  # a few more events are produced while nobody listens

    second = await connected(user)
    await second.send_json_to({"type": "resume", "turn": turn_id, "last_seq": last_seq})
    missed = await receive_until(second, terminal)
    await second.disconnect()

    assert [e["seq"] for e in missed] == list(range(last_seq + 1, missed[-1]["seq"] + 1))
    assert missed[-1]["type"] == "finished"
    assert seen[1:] + missed == await stored(turn_id)


async def test_resume_on_the_same_socket_replays_then_continues_live_without_duplicates(
    user: User, use_providers: Callable[..., None]
) -> None:
    held = ScriptedComposer(
        pieces=("Employees take twenty-six days of leave [c1]. ", "Ask your manager [c1]."),
        hold=asyncio.Event(),
    )
    use_providers(held)
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    seen = await receive_until(communicator, lambda e: e["type"] == "citation")
    turn_id = seen[0]["turn"]
    await communicator.send_json_to({"type": "resume", "turn": turn_id, "last_seq": 1})
    replayed = await receive_until(communicator, lambda e: e["seq"] == seen[-1]["seq"])
    assert held.hold is not None
    held.hold.set()
    live = await receive_until(communicator, terminal)
    await communicator.disconnect()

    assert replayed == seen[2:]  # from seq 2, as asked
    seqs = [e["seq"] for e in replayed + live]
    assert seqs == list(range(2, seqs[-1] + 1))  # then live, each event once
    assert replayed + live == (await stored(turn_id))[1:]


async def test_a_dropped_socket_cancels_nothing_the_answer_runs_to_its_end(
    user: User, use_providers: Callable[..., None], slow: ScriptedComposer
) -> None:
    use_providers(slow)
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    seen = await receive_until(communicator, lambda e: e["type"] == "token")
    await communicator.disconnect()
    turn_id = seen[0]["turn"]

    async with asyncio.timeout(10):
        while (await turn_of(turn_id)).status == TurnStatus.STREAMING:
            await asyncio.sleep(0.05)
    events = await stored(turn_id)
    assert events[-1]["type"] == "finished"
    assert (await turn_of(turn_id)).status == TurnStatus.FINISHED
    assert slow.started == 1


async def test_an_idle_socket_is_pinged_and_a_pong_is_ignored(
    user: User, settings: LazySettings
) -> None:
    settings.RAG_KEEPALIVE_S = 0.1
    communicator = await connected(user)
    assert await communicator.receive_json_from(timeout=2) == {"type": "ping"}
    await communicator.send_json_to({"type": "pong"})
    assert await communicator.receive_json_from(timeout=2) == {"type": "ping"}
    await communicator.disconnect()


async def test_resume_of_a_finished_turn_replays_from_the_store_for_its_owner_only(
    user: User, use_providers: Callable[..., None], django_user_model: type[User]
) -> None:
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    everything = await receive_until(communicator, terminal)
    turn_id = everything[0]["turn"]
    await communicator.send_json_to({"type": "resume", "turn": turn_id, "last_seq": 3})
    replayed = await receive_until(communicator, terminal)
    await communicator.disconnect()
    assert replayed == everything[4:]

    other = await sync_to_async(django_user_model.objects.create_user)(
        "bob", password="x-long-pass"
    )
    intruder = await connected(other)
    await intruder.send_json_to({"type": "resume", "turn": turn_id, "last_seq": 0})
    reply = await intruder.receive_json_from(timeout=5)
    assert reply["type"] == "failed" and reply["turn"] is None
    assert reply["data"]["code"] == "not_found"
    await intruder.disconnect()


async def test_resume_from_past_the_end_of_a_finished_turn_ends_at_once(
    user: User, use_providers: Callable[..., None]
) -> None:
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    everything = await receive_until(communicator, terminal)
    turn_id, end = everything[0]["turn"], everything[-1]
    for last_seq in (end["seq"], end["seq"] + 1, 99999):
        await communicator.send_json_to({"type": "resume", "turn": turn_id, "last_seq": last_seq})
        # A short timeout: a follower waiting for events that never come fails, not hangs.
        assert await receive_until(communicator, terminal, timeout=5) == [end]
    await communicator.disconnect()


async def test_resume_still_takes_the_deprecated_turn_id_and_warns_once(
    user: User,
    use_providers: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(consumers, "_alias_warned", False)
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    everything = await receive_until(communicator, terminal)
    turn_id = everything[0]["turn"]
    with caplog.at_level(logging.WARNING, logger=consumers.__name__):
        for _ in range(2):
            await communicator.send_json_to({"type": "resume", "turn_id": turn_id, "last_seq": 3})
            assert await receive_until(communicator, terminal) == everything[4:]
    await communicator.disconnect()
    assert [r.getMessage() for r in caplog.records if "turn_id" in r.getMessage()] == [
        'A socket message named its turn "turn_id", deprecated: send "turn"'
    ]


async def test_asks_beyond_the_per_minute_limit_are_rate_limited(
    user: User, use_providers: Callable[..., None], settings: LazySettings
) -> None:
    settings.RAG_ASKS_PER_MINUTE = 1
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    await receive_until(communicator, terminal)
    await communicator.send_json_to({"type": "ask", "question": "And the VPN?"})
    reply = await communicator.receive_json_from(timeout=5)
    await communicator.disconnect()
    assert reply["type"] == "failed" and reply["seq"] == 0 and reply["turn"] is None
    assert reply["data"]["code"] == "rate_limited"
    assert await sync_to_async(Turn.objects.count)() == 1


async def _logged_out(communicator: WebsocketCommunicator) -> None:
    """What the logout view does to the session the socket connected with."""
    session = communicator.scope["session"]
    await sync_to_async(session.flush)()


async def test_a_socket_stops_working_once_its_session_is_logged_out(user: User) -> None:
    communicator = await connected(user)
    await communicator.send_json_to({"type": "resume", "turn": 10**9, "last_seq": 0})
    assert (await communicator.receive_json_from(timeout=5))["data"]["code"] == "not_found"

    await _logged_out(communicator)
    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})
    assert await communicator.receive_output(timeout=5) == {
        "type": "websocket.close",
        "code": 4401,
    }
    assert not await Turn.objects.filter(conversation__user=user).aexists()


async def test_a_socket_of_a_deactivated_user_is_closed(user: User) -> None:
    communicator = await connected(user)
    user.is_active = False
    await user.asave(update_fields=["is_active"])
    await communicator.send_json_to({"type": "cancel"})
    assert await communicator.receive_output(timeout=5) == {
        "type": "websocket.close",
        "code": 4401,
    }


@pytest.mark.parametrize(
    "message",
    [
        {"type": "resume", "turn": 2**63, "last_seq": 0},
        {"type": "resume", "turn": 1, "last_seq": 10**30},
        {"type": "resume", "turn": "1", "last_seq": "²"},
    ],
)
async def test_resume_with_numbers_out_of_range_is_an_invalid_request(
    user: User, message: Envelope
) -> None:
    communicator = await connected(user)
    await communicator.send_json_to(message)
    reply = await communicator.receive_json_from(timeout=5)
    await communicator.disconnect()
    assert reply["type"] == "failed" and reply["data"]["code"] == "invalid_request"
