"""The chat socket's origin check: scheme, host and port against the site's origins."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import LazySettings

from ragplatform.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


async def _opens(origin: str | None) -> bool:
    headers = [(b"origin", origin.encode())] if origin is not None else []
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


@pytest.fixture
def production(settings: LazySettings) -> None:
    settings.RAG_ENV = "production"
    settings.ALLOWED_HOSTS = ["chat.example.org"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://intranet.example.org:8443"]


@pytest.mark.usefixtures("production")
async def test_production_accepts_only_the_sites_https_origins() -> None:
    assert await _opens("https://chat.example.org")
    assert await _opens("https://intranet.example.org:8443")
    # Plain http of the same host, another port, another host, no Origin at all: refused.
    assert not await _opens("http://chat.example.org")
    assert not await _opens("https://chat.example.org:8443")
    assert not await _opens("https://evil.example.net")
    assert not await _opens("https://intranet.example.org")
    assert not await _opens(None)


async def test_development_accepts_an_allowed_host_on_any_scheme_and_port(
    settings: LazySettings,
) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    assert await _opens("http://127.0.0.1:8000")
    assert not await _opens("http://evil.example.net")
