"""POST /api/answers/ served the way daphne serves it (ASGI): the synchronous API view runs the
asynchronous turn to its end without blocking or deadlocking the event loop."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import AsyncClient

from apps.answers.models import Turn, TurnStatus
from tests.answers.fakes import ANSWER_TEXT

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]


async def test_an_answer_over_asgi(user: User, use_providers: Callable[..., None]) -> None:
    client = AsyncClient()
    await client.aforce_login(user)

    response = await client.post(
        "/api/answers/",
        data=json.dumps({"question": "How many days of annual leave?"}),
        content_type="application/json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body["answer"] == ANSWER_TEXT and body["citations"]
    turn = await Turn.objects.aget(pk=body["id"])
    assert turn.status == TurnStatus.FINISHED
    assert await sync_to_async(Turn.objects.count)() == 1
