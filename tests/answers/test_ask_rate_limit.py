"""The per-user question limit holds when many processes (here: threads, each with its own
database connection) ask at the same moment: checked and counted in one statement."""

from __future__ import annotations

import time

import pytest
from asgiref.sync import async_to_sync
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.utils import timezone

from apps.answers.models import Turn, TurnClient
from apps.answers.turn.entry import RateLimited, turn_open
from tests.concurrency import run_at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_asks_never_take_more_than_the_limit(user: User, settings: LazySettings) -> None:
    settings.RAG_ASKS_PER_MINUTE = 3
    if timezone.now().second >= 58:  # the count is per clock minute: stay inside one
        time.sleep(3)

    def ask() -> str:
        try:
            async_to_sync(turn_open)(
                user_id=user.pk, conversation_id=None, question="Leave?", client=TurnClient.CHAT
            )
        except RateLimited:
            return "limited"
        return "opened"

    outcomes = run_at_once(ask, threads=8)
    assert sorted(outcomes) == ["limited"] * 5 + ["opened"] * 3
    assert Turn.objects.count() == 3
