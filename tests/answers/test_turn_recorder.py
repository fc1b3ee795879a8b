"""The recorder numbers and stores events, and ends a turn exactly once (real PostgreSQL)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction

from apps.answers.events import EventType
from apps.answers.models import Conversation, Turn, TurnEvent, TurnStatus
from apps.answers.routing.types import TurnAction
from apps.answers.turn.leases import turn_interrupt
from apps.answers.turn.outcomes import TurnFinished
from apps.answers.turn.recorder import MemoryRecorder, TurnEndedElsewhere, TurnRecorder
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import turn_start
from ragplatform.errors import FailureCode

pytestmark = pytest.mark.django_db


def _turn() -> Turn:
    return turn_start(conversation=Conversation.objects.create(), question="leave days?")


def test_events_are_numbered_stored_and_end_once() -> None:
    turn = _turn()
    recorder = TurnRecorder(turn.pk)
    async_to_sync(recorder.emit)(EventType.TOKEN, {"text": "Twenty-six days."})
    ended = async_to_sync(recorder.end)(
        TurnFinished(answer="Twenty-six days.", action=TurnAction.ANSWER)
    )

    assert [e["seq"] for e in turn_events_since(turn_id=turn.pk)] == [1, 2]
    assert ended["type"] == "finished" and ended["data"]["answer"] == "Twenty-six days."
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FINISHED and turn.answer == "Twenty-six days."
    with pytest.raises(RuntimeError, match="already ended"):
        async_to_sync(recorder.fail)(FailureCode.INTERNAL, "again")
    with pytest.raises(RuntimeError, match="already ended"):
        async_to_sync(recorder.emit)(EventType.TOKEN, {"text": "more"})


def test_a_terminal_event_only_comes_from_end() -> None:
    recorder = TurnRecorder(_turn().pk)
    with pytest.raises(ValueError, match="use end"):
        async_to_sync(recorder.emit)(EventType.FINISHED, {})


def test_resume_continues_the_numbering_and_knows_an_ended_turn() -> None:
    turn = _turn()
    async_to_sync(TurnRecorder(turn.pk).emit)(EventType.TOKEN, {"text": "a"})

    resumed = async_to_sync(TurnRecorder.resume)(turn.pk)
    assert resumed.seq == 1 and not resumed.terminated
    failed = async_to_sync(resumed.fail)(FailureCode.CANCELLED, "The answer was cancelled.")
    assert failed["seq"] == 2
    turn.refresh_from_db()
    assert turn.status == TurnStatus.CANCELLED and turn.error_code == "cancelled"

    again = async_to_sync(TurnRecorder.resume)(turn.pk)
    assert again.terminal == failed


def test_the_memory_recorder_numbers_without_storing() -> None:
    recorder = MemoryRecorder()
    first = async_to_sync(recorder.emit)(EventType.TOKEN, {"text": "a"})
    second = async_to_sync(recorder.emit)(EventType.TOKEN, {"text": "b"})
    assert (first["seq"], second["seq"]) == (1, 2) and recorder.events == [first, second]


def test_the_database_refuses_a_second_terminal_event() -> None:
    turn = _turn()
    async_to_sync(TurnRecorder(turn.pk).fail)(FailureCode.INTERNAL, "broke")
    with pytest.raises(IntegrityError), transaction.atomic():
        TurnEvent.objects.create(turn=turn, seq=9, type=EventType.FINISHED, data={})


@pytest.mark.django_db(transaction=True)  # a refused statement ends a test transaction
def test_an_event_after_the_turn_was_interrupted_elsewhere_keeps_the_stored_end() -> None:
    """A process that stalled past its lease finds its turn interrupted by another: its next
    event is refused, and it takes the stored end as the turn's instead of failing it again."""
    turn = _turn()
    recorder = TurnRecorder(turn.pk)
    async_to_sync(recorder.emit)(EventType.TOKEN, {"text": "Twenty"})
    assert turn_interrupt(turn_id=turn.pk, lapsed_only=False)  # another process, meanwhile

    with pytest.raises(TurnEndedElsewhere):
        async_to_sync(recorder.emit)(EventType.TOKEN, {"text": "-six"})
    assert recorder.terminal is not None and recorder.terminal["data"]["code"] == "interrupted"
    stored = turn_events_since(turn_id=turn.pk)
    assert [e["type"] for e in stored] == ["token", "failed"]
    assert recorder.terminal == stored[-1]


@pytest.mark.django_db(transaction=True)  # a refused statement ends a test transaction
def test_a_refused_event_on_a_turn_still_running_is_a_real_error() -> None:
    turn = _turn()
    async_to_sync(TurnRecorder(turn.pk).emit)(EventType.TOKEN, {"text": "a"})
    with pytest.raises(IntegrityError):  # a second writer numbering from 0: not an end
        async_to_sync(TurnRecorder(turn.pk).emit)(EventType.TOKEN, {"text": "b"})
