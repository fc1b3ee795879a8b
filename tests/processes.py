"""Daphne server processes on 127.0.0.1 sharing one database, and clients that talk to them
as a browser does (a session cookie; the CSRF cookie and header for SSE posts)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol

import httpx
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
CSRF_TOKEN = "a" * 32  # any 32 letters: Django compares the cookie with the header
Envelope = dict[str, Any]


class Endpoint(Protocol):
    """Where clients connect: a daphne process itself, or a proxy in front of several."""

    @property
    def http(self) -> str: ...

    @property
    def tls(self) -> ssl.SSLContext | None: ...

    @property
    def origin(self) -> str: ...

    @property
    def forwarded(self) -> dict[str, str]: ...


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """One daphne process serving `tests.stream_server`."""

    env: dict[str, str]
    log: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    # The checkout it serves: `python -m` puts the working directory first on the path, so
    # another checkout's code is only what runs when the process starts in it.
    root: Path = ROOT
    # The page origin its clients send, when the site is served elsewhere (behind a proxy).
    site_origin: str = ""
    # Headers its clients add as a proxy would (X-Forwarded-Proto), to reach it directly.
    forwarded: dict[str, str] = field(default_factory=dict)
    tls: ssl.SSLContext | None = None

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return self.site_origin or self.http

    def start(self, timeout_s: float = 60) -> Server:
        command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
        inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        path = os.pathsep.join([str(self.root), *inherited])
        env = {**os.environ, **self.env}
        env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", str(self.root)), path])
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [*command, "tests.stream_server:application"],
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return self
            time.sleep(0.1)
        raise TimeoutError(f"daphne did not listen on {self.port}")

    def kill(self) -> None:
        """kill -9: no cleanup of any kind, as when a machine dies."""
        _kill(self.process)

    def stop(self) -> None:
        _stop(self.process)


def _kill(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait()


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _kill(process)


@dataclass
class Worker:
    """One task worker (`tests.stream_worker`: the stream server's fake providers)."""

    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    root: Path = ROOT

    def start(self) -> Worker:
        env = {**os.environ, **self.env, "PYTHONPATH": str(self.root)}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.stream_worker"],
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """kill -9, mid-task: its document keeps its lease until the lease runs out."""
        _kill(self.process)

    def stop(self) -> None:
        _stop(self.process)


def servers_env(database: str, **extra: object) -> dict[str, str]:
    env = {"STREAM_DATABASE": database, "DJANGO_SETTINGS_MODULE": "ragplatform.settings"}
    return {**env, **{k: str(v) for k, v in extra.items()}}


def session_cookie(user: Any) -> str:
    """A stored login session for `user`, as the login view leaves it."""
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "apps.identity.signin.backend.LocalPasswordBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.save()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


@contextlib.asynccontextmanager
async def socket_to(server: Endpoint, cookie: str) -> AsyncIterator[ClientConnection]:
    url = server.http.replace("http", "ws", 1) + "/ws/chat/"
    headers = {**server.forwarded, "Cookie": cookie, "Origin": server.origin}
    async with connect(url, additional_headers=headers, open_timeout=10, ssl=server.tls) as ws:
        yield ws


async def socket_next(ws: ClientConnection, timeout_s: float = 30) -> Envelope:
    """The next envelope, skipping keepalive pings."""
    while True:
        message: Envelope = json.loads(await _recv(ws, timeout_s))
        if message.get("type") != "ping":
            return message


async def _recv(ws: ClientConnection, timeout_s: float) -> str:
    import asyncio

    raw = await asyncio.wait_for(ws.recv(), timeout=timeout_s)
    return raw if isinstance(raw, str) else raw.decode()


def sse_client(server: Endpoint, cookie: str, *, timeout_s: float = 60) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=server.http,
        headers={
            **server.forwarded,
            "Cookie": f"{cookie}; {settings.CSRF_COOKIE_NAME}={CSRF_TOKEN}",
            "X-CSRFToken": CSRF_TOKEN,
            # As a browser's fetch sends it: over HTTPS, Django's CSRF check wants an origin.
            "Origin": server.origin,
            "Accept": "text/event-stream",
        },
        timeout=timeout_s,
        verify=server.tls or True,
    )


async def sse_envelopes(response: httpx.Response) -> AsyncIterator[Envelope]:
    """The envelopes of an SSE response as they arrive (ping comments skipped)."""
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line.removeprefix("data: "))
