"""Rejections: one code per rejected request, the same over the WebSocket and over SSE."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import AsyncClient

from apps.answers.conversations.selectors import NotFound
from apps.answers.turn.entry import RateLimited
from apps.answers.turn.rejections import REJECTIONS, rejection_code
from apps.answers.turn.services import InvalidQuestion
from ragplatform.errors import HTTP_STATUS, FailureCode
from ragplatform.routing import websocket_urlpatterns
from tests.answers.sockets import socket_login

UNKNOWN_CONVERSATION = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
UNKNOWN_TURN = 999999


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (InvalidQuestion("empty"), FailureCode.INVALID_REQUEST),
        (NotFound("No such turn"), FailureCode.NOT_FOUND),
        (RateLimited("slow down"), FailureCode.RATE_LIMITED),
    ],
)
def test_each_rejection_has_its_own_code(exc: Exception, code: FailureCode) -> None:
    assert isinstance(exc, REJECTIONS)
    assert rejection_code(exc) is code


def test_anything_else_is_not_a_rejection() -> None:
    with pytest.raises(TypeError):
        rejection_code(KeyError("x"))


def test_every_rejection_code_has_an_http_status() -> None:
    codes = {rejection_code(exc()) for exc in REJECTIONS}
    assert codes <= set(HTTP_STATUS)


async def _socket_code(user: User, message: dict[str, Any]) -> str:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/chat/")
    await socket_login(communicator, user)
    await communicator.connect()
    await communicator.send_json_to(message)
    reply = await communicator.receive_json_from(timeout=5)
    await communicator.disconnect()
    assert reply["type"] == "failed"
    code: str = reply["data"]["code"]
    return code


async def _sse_code(user: User, method: str, url: str, body: object = None) -> tuple[int, str]:
    client = AsyncClient()
    await client.aforce_login(user)
    headers = {"Accept": "text/event-stream"}
    if method == "post":
        response = await client.post(
            url, data=json.dumps(body), content_type="application/json", headers=headers
        )
    else:
        response = await client.get(url, headers=headers)
    return response.status_code, response.json()["error"]["code"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("close_db_connections")
async def test_an_unknown_conversation_is_not_found_on_both_transports(user: User) -> None:
    question = {"question": "Leave?", "conversation": UNKNOWN_CONVERSATION}
    on_socket = await _socket_code(user, {"type": "ask", **question})
    status, over_sse = await _sse_code(user, "post", "/api/turns/", question)
    assert on_socket == over_sse == FailureCode.NOT_FOUND
    assert status == 404


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("close_db_connections")
async def test_an_unknown_turn_is_not_found_on_both_transports(user: User) -> None:
    on_socket = await _socket_code(user, {"type": "resume", "turn": UNKNOWN_TURN, "last_seq": 0})
    status, over_sse = await _sse_code(user, "get", f"/api/turns/{UNKNOWN_TURN}/events")
    assert on_socket == over_sse == FailureCode.NOT_FOUND
    assert status == 404
