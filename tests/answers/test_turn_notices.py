"""What a notice says and how a follower's subscription hands it on: the turn read from a
payload without decoding it (every process hears every turn), and a wait that times out."""

from __future__ import annotations

import asyncio

import pytest

from apps.answers.events import Envelope, EventType
from apps.answers.turn.live import Signal, Subscription
from apps.answers.turn.notices import (
    Notice,
    event_encode,
    notice_of_cancel,
    notice_parse,
    notice_turn,
)


def _envelope(turn: int, data: dict[str, object], seq: int = 7) -> Envelope:
    return Envelope(seq=seq, turn=turn, type=EventType.TOKEN, data=data)


@pytest.mark.parametrize(
    "payload",
    [
        # The event's own text names another turn: the notice's key comes first.
        event_encode(_envelope(41, {"text": '{"turn":99} "turn": 98,'})).notice,
        event_encode(_envelope(41, {"text": "x" * 9000}, seq=2_147_483_647)).notice,  # too large
        notice_of_cancel(41),
    ],
)
def test_the_turn_of_every_notice_is_read_without_decoding_it(payload: str) -> None:
    notice = notice_parse(payload)
    assert notice is not None and notice.turn == 41
    assert notice_turn(payload) == 41


@pytest.mark.parametrize("payload", ["", "hello", '{"seq": 1}', '{"turn": "41"}', "[1, 2]"])
def test_a_payload_that_is_no_notice_of_ours_names_no_turn(payload: str) -> None:
    assert notice_turn(payload) is None
    assert notice_parse(payload) is None


async def test_a_subscription_hands_on_what_is_queued_and_times_out_when_nothing_is() -> None:
    subscription = Subscription(41, cancels_only=False)
    assert await subscription.next(timeout=0.05) is Signal.TIMEOUT
    subscription.put(Notice(turn=41, seq=1))
    # Already there: handed on even with no time left to wait.
    assert await subscription.next(timeout=0) == Notice(turn=41, seq=1)

    async def later() -> None:
        await asyncio.sleep(0.05)
        subscription.put(Notice(turn=41, seq=2))

    putting = asyncio.create_task(later())
    assert await subscription.next(timeout=5) == Notice(turn=41, seq=2)
    await putting
    assert await subscription.next(timeout=0) is Signal.TIMEOUT
