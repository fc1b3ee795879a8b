"""/mcp over streamable HTTP, mounted in the ASGI application beside Django.

A request needs `Authorization: Bearer <API token>`, checked by the REST API's throttled
token authentication (so a wrong token is counted and throttled the same way); the user it
names travels in the ASGI scope to the tools. The SDK's session manager runs stateless (any
process answers any request) in one task per process, started by the first request, since
daphne runs no ASGI lifespan.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest
from rest_framework.exceptions import APIException, AuthenticationFailed

from apps.reach.mcp_server.tools import SCOPE_BASE_URL, SCOPE_USER, mcp_server_build
from ragplatform.db_threads import db_call, db_threads_detached
from ragplatform.errors import FailureCode, error_body
from ragplatform.login_throttle import ThrottledTokenAuthentication, client_ip

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
PATH = "/mcp"


def _hosts() -> list[str]:
    """ALLOWED_HOSTS as the SDK's Host patterns; [] (no check) when any host is allowed."""
    hosts = [h for h in settings.ALLOWED_HOSTS if h]
    if "*" in hosts:
        return []
    # A leading dot (a domain and its subdomains) has no SDK pattern: the name itself is kept.
    names = [h.lstrip(".") for h in hosts]
    return [pattern for name in names for pattern in (name, f"{name}:*")]


class McpHttp:
    """The ASGI application for requests under /mcp."""

    def __init__(self) -> None:
        self._server = mcp_server_build(
            allowed_hosts=_hosts(), allowed_origins=list(settings.CSRF_TRUSTED_ORIGINS)
        )
        self._server.streamable_http_app()  # creates the session manager it serves with
        self._manager = self._server.session_manager
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            user_id = await db_call(token_user_id)(
                authorization=_header(scope, b"authorization"), address=_address(scope)
            )
        except APIException as exc:
            await _refuse(send, exc)
            return
        await self._started()
        scope[SCOPE_USER] = user_id
        scope[SCOPE_BASE_URL] = _base_url(scope)
        await self._manager.handle_request(scope, receive, send)

    async def _started(self) -> None:
        if self._running is None:
            self._running = asyncio.create_task(self._run())
        await self._ready.wait()

    async def _run(self) -> None:
        # The tools' database calls use the database threads, never a request's thread.
        with db_threads_detached():
            async with self._manager.run():
                self._ready.set()
                await asyncio.Event().wait()  # for the life of the process


def token_user_id(*, authorization: str, address: str) -> int:
    """The active user the Bearer token names; raises DRF's AuthenticationFailed (401) or
    Throttled (429), as the REST API would."""
    keyword, _, key = authorization.partition(" ")
    if keyword.lower() != "bearer" or not key.strip() or " " in key.strip():
        raise AuthenticationFailed("Send Authorization: Bearer <API token>")
    authentication = ThrottledTokenAuthentication()
    authentication.address = address
    user, _token = authentication.authenticate_credentials(key.strip())
    if not isinstance(user, AbstractBaseUser) or not isinstance(user.pk, int):
        raise AuthenticationFailed("Invalid token.")
    return user.pk


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


def _address(scope: Scope) -> str:
    """The client's address as the REST API reads it (X-Forwarded-For behind RAG_PROXY_COUNT
    proxies), so a failing token is counted per the same address on both."""
    client = scope.get("client")
    request = HttpRequest()
    request.META = {
        "REMOTE_ADDR": str(client[0]) if client else "",
        "HTTP_X_FORWARDED_FOR": _header(scope, b"x-forwarded-for"),
    }
    return client_ip(request) or "unknown"


def _base_url(scope: Scope) -> str:
    host = _header(scope, b"host")
    return f"{scope.get('scheme', 'http')}://{host}" if host else ""


async def _refuse(send: Send, exc: APIException) -> None:
    code = FailureCode.UNAUTHENTICATED if exc.status_code == 401 else FailureCode.RATE_LIMITED
    headers = [(b"content-type", b"application/json")]
    if code == FailureCode.UNAUTHENTICATED:
        headers.append((b"www-authenticate", b'Bearer realm="mcp"'))
    body = json.dumps(error_body(code, str(exc.detail))).encode()
    await send({"type": "http.response.start", "status": exc.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
