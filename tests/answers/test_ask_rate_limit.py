"""The per-user question limit holds when many processes (here: threads, each with its own
database connection) ask at the same moment: checked and counted in one statement."""

from __future__ import annotations

import threading
import time

import pytest
from asgiref.sync import async_to_sync
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from apps.answers.models import Turn
from apps.answers.turn.entry import RateLimited, turn_open

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_asks_never_take_more_than_the_limit(user: User, settings: LazySettings) -> None:
    settings.RAG_ASKS_PER_MINUTE = 3
    if timezone.now().second >= 58:  # the count is per clock minute: stay inside one
        time.sleep(3)
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def ask() -> None:
        start.wait()
        try:
            async_to_sync(turn_open)(user_id=user.pk, conversation_id=None, question="Leave?")
            outcomes.append("opened")
        except RateLimited:
            outcomes.append("limited")
        finally:
            connection.close()

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["limited"] * 5 + ["opened"] * 3
    assert Turn.objects.count() == 3
