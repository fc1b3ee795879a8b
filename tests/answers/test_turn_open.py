"""What opening a turn stores, and what the asker's own follow skips: the statements between a
question and its first event are paid by every question, so they are counted here."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.answers.models import Turn, TurnClient
from apps.answers.turn.entry import turn_open
from apps.answers.turn.follow import AskerReadable, _Follower
from apps.corpus.models import Collection

pytestmark = pytest.mark.django_db


def _statements_on(table_prefix: str, captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if table_prefix in q["sql"]]


def test_a_new_conversation_and_its_turn_are_stored_together_in_two_statements(
    user: User,
) -> None:
    public = Collection.objects.create(name="Handbook", public=True)
    Collection.objects.create(name="Board minutes")  # not public: ada may not read it

    with CaptureQueriesContext(connection) as captured:
        opened = async_to_sync(turn_open)(
            user_id=user.pk,
            conversation_id=None,
            question="  How many days of leave?  ",
            client=TurnClient.OPENAI,
            client_agent="OpenAI/Python 1.0",
        )

    turn = Turn.objects.get(pk=opened.turn.pk)
    assert turn.question == "How many days of leave?" and turn.index == 1
    assert turn.conversation.user_id == user.pk
    assert turn.readable_collections == [public.pk]  # stored with the turn, for the audit
    assert (turn.client, turn.client_agent) == (TurnClient.OPENAI, "OpenAI/Python 1.0")
    assert opened.asker == AskerReadable(frozenset({public.pk}))
    writes = _statements_on("answers_", captured)
    assert [sql.split()[0] for sql in writes] == ["INSERT", "INSERT"]


def test_a_later_question_continues_the_conversation_and_records_what_it_could_read(
    user: User,
) -> None:
    first = async_to_sync(turn_open)(
        user_id=user.pk, conversation_id=None, question="Leave?", client=TurnClient.CHAT
    )
    later = async_to_sync(turn_open)(
        user_id=user.pk,
        conversation_id=first.turn.conversation_id,
        question="And sick days?",
        client=TurnClient.MCP_STDIO,
        client_agent="desk\x00top/" + "9" * 300,  # whatever a client sends: cut, never refused
    )
    turn = Turn.objects.get(pk=later.turn.pk)
    assert turn.index == 2 and turn.conversation_id == first.turn.conversation_id
    assert turn.readable_collections == []
    # Each turn records the door its own question came through.
    assert turn.client == TurnClient.MCP_STDIO and first.turn.client == TurnClient.CHAT
    assert turn.client_agent == ("desktop/" + "9" * 300)[:200]


def test_the_askers_follow_starts_from_what_opening_decided(user: User) -> None:
    opened = async_to_sync(turn_open)(
        user_id=user.pk, conversation_id=None, question="Leave?", client=TurnClient.CHAT
    )

    asker = _Follower(turn_id=opened.turn.pk, user_id=user.pk, last_seq=0, asker=opened.asker)
    with CaptureQueriesContext(connection) as captured:
        assert asker.open() == []
    assert len(captured) == 1  # the stored events; nothing to decide or note again
    assert not asker.filter_live

    # Anyone else (a resume, another tab) decides what they may read now.
    reader = _Follower(turn_id=opened.turn.pk, user_id=user.pk, last_seq=0, asker=None)
    with CaptureQueriesContext(connection) as captured:
        reader.open()
    assert _statements_on("corpus_collection", captured)
