"""Leases, cancel requests and interruption: whether a turn is still answered and wanted is
read from its row, whichever process asks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone

from apps.answers.events import Envelope, EventType
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.routing.types import TurnAction
from apps.answers.turn.entry import turn_events, turn_follow
from apps.answers.turn.leases import (
    turn_cancel_request,
    turn_follow_check,
    turn_interrupt,
    turn_lease_renew,
    turns_interrupt_lapsed,
)
from apps.answers.turn.outcomes import TurnFinished
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import turn_end, turn_events_append, turn_start
from apps.corpus.search.legs import SearchFilters
from ragplatform.errors import FailureCode
from ragplatform.periodic import periodic_jobs
from tests.answers.fakes import ScriptedComposer
from tests.concurrency import run_at_once

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]


def _turn(user: User, *, tokens: tuple[str, ...] = ()) -> Turn:
    turn = turn_start(conversation=Conversation.objects.create(user=user), question="Leave days?")
    for seq, text in enumerate(tokens, start=1):
        turn_events_append(
            turn_id=turn.pk,
            envelopes=[Envelope(seq=seq, turn=turn.pk, type=EventType.TOKEN, data={"text": text})],
        )
    return turn


def _lapse(turn: Turn) -> None:
    Turn.objects.filter(pk=turn.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_a_new_turn_carries_a_lease_and_is_followed(user: User, settings: LazySettings) -> None:
    settings.RAG_TURN_LEASE_S = 30
    turn = Turn.objects.get(pk=_turn(user).pk)
    assert turn.lease_expires_at is not None and turn.followed_at is not None
    lease = (turn.lease_expires_at - timezone.now()).total_seconds()
    assert 25 < lease <= 30


def test_renewal_extends_the_lease_and_reports_cancel_abandonment_and_loss(
    user: User, settings: LazySettings
) -> None:
    turn = _turn(user)
    _lapse(turn)
    renewal = turn_lease_renew(turn_id=turn.pk)
    assert renewal.held and not renewal.cancel_requested and not renewal.abandoned
    assert Turn.objects.get(pk=turn.pk).lease_expires_at > timezone.now()  # type: ignore[operator]

    settings.RAG_TURN_ABANDON_S = 60
    Turn.objects.filter(pk=turn.pk).update(followed_at=F("followed_at") - timedelta(seconds=61))
    assert turn_lease_renew(turn_id=turn.pk).abandoned
    assert turn_cancel_request(turn_id=turn.pk)
    assert turn_lease_renew(turn_id=turn.pk).cancel_requested

    turn_end(turn_id=turn.pk, seq=1, outcome=TurnFinished(answer="", action=TurnAction.SEARCH))
    assert not turn_lease_renew(turn_id=turn.pk).held
    assert not turn_cancel_request(turn_id=turn.pk)  # ended: nothing to cancel


def test_a_lapsed_turn_is_interrupted_once_keeping_the_partial_answer(user: User) -> None:
    turn = _turn(user, tokens=("Employees take ", "twenty-six days"))
    assert not turn_interrupt(turn_id=turn.pk)  # its lease is live: someone answers it
    _lapse(turn)
    assert turn_interrupt(turn_id=turn.pk)
    assert not turn_interrupt(turn_id=turn.pk)

    stored = turn_events_since(turn_id=turn.pk)
    assert stored[-1]["seq"] == 3 and stored[-1]["type"] == "failed"
    assert stored[-1]["data"] == {
        "code": "interrupted",
        "message": stored[-1]["data"]["message"],
        "retryable": True,
    }
    ended = Turn.objects.get(pk=turn.pk)
    assert ended.status == TurnStatus.FAILED and ended.error_code == FailureCode.INTERRUPTED
    assert ended.answer == "Employees take twenty-six days" and ended.partial


def test_the_sweeper_is_registered_and_safe_to_run_in_several_workers(user: User) -> None:
    assert "answers.turns_interrupt_lapsed" in {job.name for job in periodic_jobs()}
    turns = [_turn(user, tokens=("Some text",)) for _ in range(6)]
    live = _turn(user)
    for turn in turns:
        _lapse(turn)
    counts = run_at_once(turns_interrupt_lapsed, threads=3)
    assert sum(counts) == 6
    for turn in turns:
        stored = turn_events_since(turn_id=turn.pk)
        assert [e["type"] for e in stored].count("failed") == 1
    assert Turn.objects.get(pk=live.pk).status == TurnStatus.STREAMING


def test_a_follower_check_interrupts_a_lapsed_turn_and_notes_it_is_followed(user: User) -> None:
    turn = _turn(user)
    Turn.objects.filter(pk=turn.pk).update(followed_at=None)
    turn_follow_check(turn_id=turn.pk)
    assert Turn.objects.get(pk=turn.pk).followed_at is not None
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.STREAMING
    _lapse(turn)
    turn_follow_check(turn_id=turn.pk)
    assert Turn.objects.get(pk=turn.pk).error_code == FailureCode.INTERRUPTED


async def test_a_follower_of_a_turn_whose_process_died_ends_with_interrupted(
    user: User, settings: LazySettings
) -> None:
    settings.RAG_TURN_LEASE_S = 1
    settings.RAG_TURN_FOLLOW_CHECK_S = 0.2
    # Nobody answers it: as if the process holding it was killed after two tokens.
    turn = await sync_to_async(_turn)(user, tokens=("Employees take ", "twenty-six days"))
    received: list[Envelope] = []
    async with asyncio.timeout(5):
        async for envelope in turn_follow(turn_id=turn.pk, user_id=user.pk):
            received.append(envelope)
    assert [e["type"] for e in received] == ["token", "token", "failed"]
    assert received[-1]["data"]["code"] == "interrupted"


async def test_a_cancel_request_from_anywhere_stops_the_answer(
    user: User, use_providers: Callable[..., None]
) -> None:
    use_providers(ScriptedComposer(pieces=[f"Part {i} [c1]. " for i in range(20)], delay_s=0.1))
    turn = await sync_to_async(_turn)(user)
    received: list[Envelope] = []
    async with asyncio.timeout(10):
        async for envelope in turn_events(turn_id=turn.pk, filters=SearchFilters()):
            received.append(envelope)
            if envelope["type"] == "token" and [e["type"] for e in received].count("token") == 1:
                # Another process's request: a row update and a notice, nothing in memory.
                assert await sync_to_async(turn_cancel_request)(turn_id=turn.pk)
    assert received[-1]["type"] == "failed" and received[-1]["data"]["code"] == "cancelled"
    assert len([e for e in received if e["type"] == "token"]) < 10
    assert (await Turn.objects.aget(pk=turn.pk)).status == TurnStatus.CANCELLED


async def test_an_answer_nobody_follows_is_cancelled_after_the_abandonment_limit(
    user: User, use_providers: Callable[..., None], settings: LazySettings
) -> None:
    settings.RAG_TURN_ABANDON_S = 5
    use_providers(ScriptedComposer(pieces=[f"Part {i} [c1]. " for i in range(20)], delay_s=0.1))
    turn = await sync_to_async(_turn)(user)
    await Turn.objects.filter(pk=turn.pk).aupdate(followed_at=timezone.now() - timedelta(seconds=6))
    async with asyncio.timeout(10):
        # As `turn_launch` runs it: nobody reads these events but the followers.
        events = turn_events(turn_id=turn.pk, filters=SearchFilters(), waited=False)
        received = [e async for e in events]
    assert received[-1]["type"] == "failed" and received[-1]["data"]["code"] == "cancelled"
    assert (await Turn.objects.aget(pk=turn.pk)).status == TurnStatus.CANCELLED


async def test_an_event_too_large_for_a_notice_is_read_from_the_store(
    user: User, settings: LazySettings
) -> None:
    turn = await sync_to_async(_turn)(user, tokens=("Short. ",))
    big = "x" * 20_000
    received: list[Envelope] = []

    async def follow() -> None:
        async for envelope in turn_follow(turn_id=turn.pk, user_id=user.pk):
            received.append(envelope)

    following = asyncio.create_task(follow())
    await asyncio.sleep(0.3)  # subscribed and past the stored event
    for seq, text in ((2, big), (3, "End.")):
        await sync_to_async(turn_events_append)(
            turn_id=turn.pk,
            envelopes=[Envelope(seq=seq, turn=turn.pk, type=EventType.TOKEN, data={"text": text})],
        )
    await sync_to_async(turn_end)(
        turn_id=turn.pk, seq=4, outcome=TurnFinished(answer="", action=TurnAction.SEARCH)
    )
    await asyncio.wait_for(following, timeout=3)
    assert [e["seq"] for e in received] == [1, 2, 3, 4]
    assert received[1]["data"]["text"] == big
