"""Events written several at a time: one statement stores the events that are ready together
(of one turn, or of several detached turns at once) and announces each, in order; a follower, live or resuming, gets every event exactly once
(real PostgreSQL, real LISTEN/NOTIFY)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from apps.answers.events import Envelope, EventType
from apps.answers.models import Conversation, Turn, TurnEvent
from apps.answers.routing.types import TurnAction
from apps.answers.turn.follow import turn_follow
from apps.answers.turn.notices import TURN_CHANNEL, notice_parse
from apps.answers.turn.outcomes import TurnFailed, TurnFinished
from apps.answers.turn.recorder import TurnEndedElsewhere, TurnRecorder
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import turn_end, turn_events_append, turn_start
from apps.answers.turn.writer import turn_events_write
from ragplatform.db_threads import db_threads_detached
from ragplatform.errors import FailureCode
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake, turn_collected
from tests.conftest import CountingEmbedder

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]


def _turn(user: User | None = None) -> Turn:
    return turn_start(conversation=Conversation.objects.create(user=user), question="Leave?")


def _token(turn: Turn, seq: int, text: str | None = None) -> Envelope:
    return Envelope(seq=seq, turn=turn.pk, type=EventType.TOKEN, data={"text": text or f"{seq} "})


@pytest.fixture
def listening() -> Iterator[psycopg.Connection[Any]]:
    """Another connection listening on the turns' channel, as another process's would."""
    params = connection.get_connection_params()
    keep = {"dbname", "host", "port", "user", "password"}
    conninfo = {k: v for k, v in params.items() if k in keep and v}
    with psycopg.connect(**conninfo, autocommit=True) as conn:
        conn.execute(f"LISTEN {TURN_CHANNEL}")
        yield conn


def _heard(conn: psycopg.Connection[Any], *, wait_s: float = 1.0) -> list[Envelope]:
    heard = []
    for notify in conn.notifies(timeout=wait_s):
        notice = notice_parse(notify.payload)
        assert notice is not None and notice.envelope is not None
        heard.append(notice.envelope)
    return heard


def test_the_events_of_one_write_are_stored_and_announced_in_their_order(
    listening: psycopg.Connection[Any],
) -> None:
    turn = _turn()
    written = [
        _token(turn, 1),
        _token(turn, 2, 'Persian: مرخصی «سالانه» "quoted" \\ \nand a line break '),
        _token(turn, 3),
    ]

    with CaptureQueriesContext(connection) as queries:
        turn_events_append(turn_id=turn.pk, envelopes=written)

    assert len(queries) == 1
    assert turn_events_since(turn_id=turn.pk) == written
    assert _heard(listening) == written  # each once, in seq order, the data as stored
    rows = TurnEvent.objects.filter(turn=turn)
    assert len({row.created_at for row in rows}) == 1  # one statement's time


def test_a_write_with_a_number_already_taken_stores_and_announces_none_of_it(
    listening: psycopg.Connection[Any],
) -> None:
    turn = _turn()
    turn_events_append(turn_id=turn.pk, envelopes=[_token(turn, 1), _token(turn, 2)])
    _heard(listening)

    with pytest.raises(IntegrityError):
        turn_events_append(turn_id=turn.pk, envelopes=[_token(turn, 3), _token(turn, 2)])

    assert [e["seq"] for e in turn_events_since(turn_id=turn.pk)] == [1, 2]
    assert _heard(listening, wait_s=0.3) == []


def test_events_of_another_turn_are_refused() -> None:
    turn, other = _turn(), _turn()
    with pytest.raises(ValueError, match="belongs to turn"):
        turn_events_append(turn_id=turn.pk, envelopes=[_token(turn, 1), _token(other, 2)])
    assert not TurnEvent.objects.exists()


def test_a_citation_and_the_sentence_it_closes_are_stored_in_one_write(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    # One delta: a sentence, its marker, the next sentence: three events ready at once.
    composer = ScriptedComposer(
        pieces=(
            "Employees take twenty-six days of annual leave a year [c1]. Ask your manager before you book days away, a month ahead at the latest. ",
        )
    )
    with CaptureQueriesContext(connection) as queries:
        turn, events = turn_collected(providers_fake(embedder, composer=composer), "Leave days?")

    assert [e["type"] for e in events] == [
        "classification",
        "progress",  # the search is over, the answer is being written
        "token",  # the first sentence, ...
        "citation",  # ... its citation ...
        "token",  # ... and the next sentence to a clause's end: all from one delta
        "token",  # the rest, held until the composer ended
        "confidence",
        "followups",
        "finished",
    ]
    assert turn_events_since(turn_id=turn.pk) == events
    times = TurnEvent.objects.filter(turn=turn).values_list("created_at", "seq").order_by("seq")
    writes: dict[object, list[int]] = {}
    for at, seq in times:
        writes.setdefault(at, []).append(seq)  # one write, one statement: one time
    assert list(writes.values()) == [[1], [2], [3, 4, 5], [6], [7], [8, 9]]
    statements = [q for q in queries.captured_queries if "pg_notify" in q["sql"]]
    assert len(statements) == len(writes)


async def test_followers_live_and_resuming_inside_a_write_get_each_event_once(
    user: User,
) -> None:
    turn = await sync_to_async(_turn)(user)
    recorder = TurnRecorder(turn.pk)
    await recorder.emit_many([(EventType.TOKEN, {"text": "One. "})])
    live: list[Envelope] = []
    joined: list[Envelope] = []

    async def follow(into: list[Envelope], last_seq: int) -> None:
        async for envelope in turn_follow(turn_id=turn.pk, user_id=user.pk, last_seq=last_seq):
            into.append(envelope)

    following = [
        asyncio.create_task(follow(live, 0)),
        asyncio.create_task(follow(joined, 1)),  # has the first event already
    ]
    await asyncio.sleep(0.3)  # subscribed, past what is stored
    await recorder.emit_many([(EventType.TOKEN, {"text": f"{n}. "}) for n in ("Two", "Three")])
    finished = TurnFinished(answer="One. Two. Three.", action=TurnAction.ANSWER)
    await recorder.end_after(finished, before=[(EventType.FOLLOWUPS, {"questions": []})])
    await asyncio.wait_for(asyncio.gather(*following), timeout=5)

    stored = await sync_to_async(turn_events_since)(turn_id=turn.pk)
    assert [e["seq"] for e in stored] == [1, 2, 3, 4, 5]
    assert live == stored and joined == stored[1:]
    # A client that dropped after the second event, inside a write of two, resumes with
    # exactly what it missed.
    resumed: list[Envelope] = []
    await follow(resumed, 2)
    assert resumed == stored[2:]


async def test_writes_of_detached_turns_ready_together_share_one_statement(
    listening: psycopg.Connection[Any],
) -> None:
    turns = [await sync_to_async(_turn)() for _ in range(3)]
    writes = [[_token(t, 1), _token(t, 2)] for t in turns]

    with db_threads_detached():
        await asyncio.gather(
            *(
                turn_events_write(turn_id=t.pk, envelopes=w)
                for t, w in zip(turns, writes, strict=True)
            )
        )

    stored = await sync_to_async(lambda: list(TurnEvent.objects.values_list("created_at")))()
    assert len(stored) == 6 and len(set(stored)) == 1  # one statement's time
    heard = await asyncio.to_thread(_heard, listening)
    assert heard == [e for w in writes for e in w]  # each turn's events in their order
    for turn, written in zip(turns, writes, strict=True):
        assert await sync_to_async(turn_events_since)(turn_id=turn.pk) == written


async def test_a_refused_turn_keeps_its_events_out_of_the_others_write(
    listening: psycopg.Connection[Any],
) -> None:
    taken, first, second = [await sync_to_async(_turn)() for _ in range(3)]
    await sync_to_async(turn_events_append)(turn_id=taken.pk, envelopes=[_token(taken, 1)])
    await asyncio.to_thread(_heard, listening)

    with db_threads_detached():
        results = await asyncio.gather(
            turn_events_write(turn_id=first.pk, envelopes=[_token(first, 1)]),
            turn_events_write(turn_id=taken.pk, envelopes=[_token(taken, 1, "again")]),
            turn_events_write(turn_id=taken.pk, envelopes=[_token(taken, 2)]),
            turn_events_write(turn_id=second.pk, envelopes=[_token(second, 1)]),
            return_exceptions=True,
        )

    assert results[0] is None and results[3] is None
    # The refused write, and the turn's write after it, which would follow a gap.
    assert isinstance(results[1], IntegrityError) and isinstance(results[2], IntegrityError)
    heard = await asyncio.to_thread(_heard, listening)
    assert [(e["turn"], e["seq"]) for e in heard] == [(first.pk, 1), (second.pk, 1)]
    assert [e["seq"] for e in await sync_to_async(turn_events_since)(turn_id=taken.pk)] == [1]


async def test_a_turn_ended_elsewhere_is_told_so_when_its_write_is_shared() -> None:
    ended, running = await sync_to_async(_turn)(), await sync_to_async(_turn)()
    # Interrupted elsewhere (its lease lapsed) before this process wrote its first event.
    failed = TurnFailed(code=FailureCode.INTERRUPTED, message="interrupted")
    await sync_to_async(turn_end)(turn_id=ended.pk, seq=1, outcome=failed)
    late, alive = TurnRecorder(ended.pk), TurnRecorder(running.pk)

    with db_threads_detached():
        results = await asyncio.gather(
            late.emit(EventType.TOKEN, {"text": "late "}),
            alive.emit(EventType.TOKEN, {"text": "on time "}),
            return_exceptions=True,
        )

    assert isinstance(results[0], TurnEndedElsewhere)
    assert late.terminal is not None and late.terminal["type"] == "failed"
    assert [results[1]] == await sync_to_async(turn_events_since)(turn_id=running.pk)


async def test_a_shared_write_is_made_though_its_turn_stopped_waiting() -> None:
    turn = await sync_to_async(_turn)()
    with db_threads_detached():
        write = asyncio.ensure_future(
            turn_events_write(turn_id=turn.pk, envelopes=[_token(turn, 1)])
        )
        await asyncio.sleep(0)  # handed over
        write.cancel()
        for _ in range(50):
            if await sync_to_async(turn_events_since)(turn_id=turn.pk):
                break
            await asyncio.sleep(0.05)
    assert [e["seq"] for e in await sync_to_async(turn_events_since)(turn_id=turn.pk)] == [1]
