"""A chat socket in tests that is logged in the way a browser's is: through a stored session."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib import import_module
from typing import Any

from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

from ragplatform.routing import websocket_urlpatterns


def _session_for(user: Any) -> Any:
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    if user is not None and user.is_authenticated:
        store[SESSION_KEY] = str(user.pk)
        # A local password sign-in, as a browser's login stores it (only configured backends count).
        store[BACKEND_SESSION_KEY] = "apps.identity.signin.backend.LocalPasswordBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.save()
    return store


async def socket_login(communicator: WebsocketCommunicator, user: Any) -> None:
    """What channels' AuthMiddlewareStack puts in the scope for a browser with this login."""
    communicator.scope["user"] = user
    communicator.scope["session"] = await sync_to_async(_session_for)(user)


Envelope = dict[str, Any]


TERMINAL = {"finished", "failed"}


async def connected(user: Any) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/chat/")
    await socket_login(communicator, user)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def receive_until(
    communicator: WebsocketCommunicator, stop: Callable[[Envelope], bool], timeout: float = 10
) -> list[Envelope]:
    received: list[Envelope] = []
    async with asyncio.timeout(timeout):
        while not received or not stop(received[-1]):
            received.append(await communicator.receive_json_from(timeout=timeout))
    return received


def terminal(envelope: Envelope) -> bool:
    return envelope["type"] in TERMINAL and envelope["seq"] > 0
