"""Reads of turns on the answering path: what the answering process reads of a turn, and the
stored events a follower is sent (as columns, without a model instance per row)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.answers.conversations.selectors import NotFound
from apps.answers.events import Envelope, EventType
from apps.answers.models import Conversation, Turn
from apps.answers.turn.outcomes import TurnFailed
from apps.answers.turn.selectors import (
    TurnAsked,
    turn_asked_get,
    turn_events_resumed,
    turn_events_since,
)
from apps.answers.turn.services import turn_end, turn_events_append, turn_start
from ragplatform.errors import FailureCode

pytestmark = pytest.mark.django_db


def _turn() -> Turn:
    conversation = Conversation.objects.create()
    turn_start(conversation=conversation, question="First?")
    return turn_start(conversation=conversation, question="  Leave days? ")


def test_the_answering_process_reads_the_question_and_its_place_in_one_statement() -> None:
    turn = _turn()
    with CaptureQueriesContext(connection) as queries:
        asked = turn_asked_get(turn_id=turn.pk)
    assert asked == TurnAsked(question="Leave days?", conversation_id=turn.conversation_id, index=2)
    assert len(queries) == 1 and "JOIN" not in queries[0]["sql"]


def test_a_turn_that_is_gone_is_not_found() -> None:
    with pytest.raises(NotFound):
        turn_asked_get(turn_id=10**9)


def test_a_follower_is_sent_the_stored_events_after_its_seq_and_the_end_again() -> None:
    turn = _turn()
    data = {"text": "Persian: مرخصی «سالانه» ", "nested": {"n": [1, 2]}}
    written = [Envelope(seq=seq, turn=turn.pk, type=EventType.TOKEN, data=data) for seq in (1, 2)]
    turn_events_append(turn_id=turn.pk, envelopes=written)
    failed = turn_end(
        turn_id=turn.pk, seq=3, outcome=TurnFailed(code=FailureCode.INTERNAL, message="broke")
    )

    assert turn_events_since(turn_id=turn.pk, last_seq=1) == [written[1], failed]
    assert turn_events_resumed(turn_id=turn.pk, last_seq=1) == [written[1], failed]
    assert turn_events_resumed(turn_id=turn.pk, last_seq=3) == [failed]  # past the end
    assert turn_events_resumed(turn_id=turn.pk, last_seq=9) == [failed]
