"""The clients of `stream_load.py`: one question each over the WebSocket or SSE, optionally
dropped mid-answer and resumed on the other server process, recording every envelope with
its arrival time."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.processes import Endpoint, socket_next, socket_to, sse_client, sse_envelopes

QUESTION = "How many days of leave?"
TERMINAL = {"finished", "failed"}


@dataclass
class ClientRun:
    transport: str  # "ws" or "sse"
    ask_on: Endpoint
    resume_on: Endpoint | None  # drop after `drop_after` tokens and resume there
    cookie: str
    drop_after: int = 2
    turn: int | None = None
    sent_at: float = 0.0
    accepted_at: float | None = None  # the turn exists: WebSocket `accepted`, SSE headers
    first_at: float | None = None
    ended_at: float | None = None
    received: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # when each of `received` came
    gaps: list[float] = field(default_factory=list)
    error: str = ""
    following_again: bool = False  # reconnected to `resume_on`
    _last_at: float | None = None

    def take(self, envelope: dict[str, Any]) -> bool:
        """Record one envelope; True when it ends the turn."""
        now = time.monotonic()
        if envelope.get("seq", 0) <= 0:
            return False
        if self.first_at is None:
            self.first_at = now
        if self._last_at is not None:
            self.gaps.append(now - self._last_at)
        self._last_at = now
        self.turn = envelope["turn"]
        self.received.append(envelope)
        self.arrivals.append(now)
        if envelope["type"] in TERMINAL:
            self.ended_at = now
            return True
        return False

    def should_drop(self) -> bool:
        tokens = sum(1 for e in self.received if e["type"] == "token")
        return self.resume_on is not None and tokens >= self.drop_after

    @property
    def last_seq(self) -> int:
        return max((e["seq"] for e in self.received), default=0)

    @property
    def terminal(self) -> dict[str, Any] | None:
        ends = [e for e in self.received if e["type"] in TERMINAL]
        return ends[-1] if ends else None

    @property
    def text(self) -> str:
        seen: dict[int, str] = {}
        for e in self.received:
            if e["type"] == "token":
                seen.setdefault(e["seq"], e["data"]["text"])
        return "".join(seen[s] for s in sorted(seen))


async def client_run(run: ClientRun, timeout_s: float) -> ClientRun:
    try:
        run.sent_at = time.monotonic()
        ask = _ws_ask if run.transport == "ws" else _sse_ask
        if await ask(run, timeout_s) or run.resume_on is None:
            return run
        run._last_at = None  # a new connection: the reconnect is not a gap between events
        follow = _ws_follow if run.transport == "ws" else _sse_follow
        await follow(run, run.resume_on, timeout_s)
    except Exception as exc:  # recorded and counted, never fatal to the benchmark
        run.error = f"{type(exc).__name__}: {exc}"
    return run


async def _ws_ask(run: ClientRun, timeout_s: float) -> bool:
    async with socket_to(run.ask_on, run.cookie) as ws:
        await ws.send(json.dumps({"type": "ask", "question": QUESTION}))
        while True:
            envelope = await socket_next(ws, timeout_s)
            if envelope["type"] == "accepted":
                run.turn, run.accepted_at = envelope["turn"], time.monotonic()
            elif envelope.get("turn") is None:
                raise RuntimeError(envelope["data"]["message"])
            if run.take(envelope):
                return True
            if run.should_drop():
                return False


async def _ws_follow(run: ClientRun, server: Endpoint, timeout_s: float) -> None:
    async with socket_to(server, run.cookie) as ws:
        await ws.send(json.dumps({"type": "resume", "turn": run.turn, "last_seq": run.last_seq}))
        run.following_again = True
        while not run.take(await socket_next(ws, timeout_s)):
            pass


async def _sse_ask(run: ClientRun, timeout_s: float) -> bool:
    async with (
        sse_client(run.ask_on, run.cookie, timeout_s=timeout_s) as client,
        client.stream("POST", "/api/turns/", json={"question": QUESTION}) as response,
    ):
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {(await response.aread())[:200]!r}")
        run.turn, run.accepted_at = int(response.headers["X-Turn-Id"]), time.monotonic()
        async for envelope in sse_envelopes(response):
            if run.take(envelope):
                return True
            if run.should_drop():
                return False
    return False


async def _sse_follow(run: ClientRun, server: Endpoint, timeout_s: float) -> None:
    headers = {"Last-Event-ID": str(run.last_seq)}
    async with (
        sse_client(server, run.cookie, timeout_s=timeout_s) as client,
        client.stream("GET", f"/api/turns/{run.turn}/events", headers=headers) as response,
    ):
        run.following_again = True
        async for envelope in sse_envelopes(response):
            if run.take(envelope):
                return


async def client_resume(run: ClientRun, servers: Sequence[Endpoint], timeout_s: float) -> ClientRun:
    """Follow `run`'s turn again after its connection ended without a terminal event, as the
    chat page does after a close (a pause of 0.5 s doubling to 8 s, either server) and an
    EventSource after a cut stream, until the turn's end or `timeout_s`."""
    deadline, pause, tries = time.monotonic() + timeout_s, 0.5, 0
    while run.turn is not None and run.terminal is None and time.monotonic() < deadline:
        await asyncio.sleep(pause)
        pause, tries = min(pause * 2, 8.0), tries + 1
        follow = _ws_follow if run.transport == "ws" else _sse_follow
        try:
            await follow(run, servers[tries % len(servers)], deadline - time.monotonic())
        except Exception as exc:  # still down, or cut again: try again
            run.error = f"{type(exc).__name__}: {exc}"
    return run
