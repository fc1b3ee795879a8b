"""A chat socket while the database cannot be reached: the login cannot be checked, which is
not a logout, and a followed answer cannot be read on. The socket gets a typed `unavailable`
event and close code 4503 (the page reconnects and resumes), never 4401 (the page goes to the
login page) nor a bare internal error: at connect, at a message, and while following."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.db import OperationalError

from apps.answers.web import consumers
from ragplatform.routing import websocket_urlpatterns
from ragplatform.session_check import socket_auth_stack
from tests.answers.sockets import _session_for, connected
from tests.factories import ConversationFactory, TurnFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]


def _database_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session read fails as it does while PostgreSQL restarts."""

    def refused(self: SessionStore) -> Any:
        raise OperationalError("connection to server failed: Connection refused")

    monkeypatch.setattr(SessionStore, "_get_session_from_db", refused)


def _unavailable(reply: dict[str, Any]) -> bool:
    return reply["type"] == "failed" and reply["data"]["code"] == "unavailable"


async def test_a_socket_opened_while_the_database_is_down_is_closed_as_unavailable(
    user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await sync_to_async(_session_for)(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={session.session_key}".encode()
    # The socket stack the server runs (cookies, session, login), not a scope made by hand.
    application = socket_auth_stack(URLRouter(websocket_urlpatterns))
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=[(b"cookie", cookie)])
    _database_down(monkeypatch)

    accepted, _ = await communicator.connect(timeout=5)

    assert accepted
    reply = await communicator.receive_json_from(timeout=5)
    assert _unavailable(reply) and reply["seq"] == 0 and reply["data"]["message"]
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4503}


async def test_a_socket_whose_login_cannot_be_rechecked_is_closed_as_unavailable(
    user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    communicator = await connected(user)
    _database_down(monkeypatch)

    await communicator.send_json_to({"type": "ask", "question": "How many days of leave?"})

    assert _unavailable(await communicator.receive_json_from(timeout=5))
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4503}


async def test_once_the_database_is_back_the_same_login_connects(user: User) -> None:
    session = await sync_to_async(_session_for)(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={session.session_key}".encode()
    application = socket_auth_stack(URLRouter(websocket_urlpatterns))
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=[(b"cookie", cookie)])
    accepted, _ = await communicator.connect(timeout=5)
    assert accepted
    await communicator.send_json_to({"type": "resume", "turn": 10**9, "last_seq": 0})
    assert (await communicator.receive_json_from(timeout=5))["data"]["code"] == "not_found"
    await communicator.disconnect()


async def test_a_follow_cut_off_by_the_database_closes_the_socket_as_unavailable(
    user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = await sync_to_async(ConversationFactory.create)(user=user)
    turn = await sync_to_async(TurnFactory.create)(conversation=conversation)

    async def cut_off(**kwargs: Any) -> Any:
        raise OperationalError("consuming input failed: server closed the connection")
        yield  # an async generator, as turn_follow is

    monkeypatch.setattr(consumers, "turn_follow", cut_off)
    communicator = await connected(user)

    await communicator.send_json_to({"type": "resume", "turn": turn.pk, "last_seq": 0})

    assert _unavailable(await communicator.receive_json_from(timeout=5))
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4503}
