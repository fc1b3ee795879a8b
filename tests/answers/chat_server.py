"""A scripted OpenAI-compatible HTTP server: the failure shapes and replies a real model will
not produce on demand."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Future

Responder = Callable[[bytes, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def scripted_server(respond: Responder) -> AsyncIterator[tuple[str, list[bytes]]]:
    """An HTTP/1.1 server on a free port; yields its /v1 URL and the request bodies it saw."""
    bodies: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length:")
            ),
            0,
        )
        body = await reader.readexactly(length)
        bodies.append(body)
        try:
            await respond(body, reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}/v1", bodies


def http_response(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nConnection: close\r\n"
    return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


def sse_chunk(content: str | None) -> bytes:
    delta = {"role": "assistant"} if content is None else {"content": content}
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def sse_response(*events: bytes) -> bytes:
    return http_response(200, b"".join(events), "text/event-stream")


def dribbling(pieces: list[str], *, delay_s: float, first_delay_s: float = 0.0) -> Responder:
    """A slow model: the stream's head at once, then one piece every `delay_s` (the first after
    `first_delay_s`), then the end; the body runs until the connection closes."""

    async def respond(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        writer.write(head.encode() + sse_chunk(None))
        await writer.drain()
        await asyncio.sleep(first_delay_s)
        for piece in pieces:
            writer.write(sse_chunk(piece))
            await writer.drain()
            await asyncio.sleep(delay_s)
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()

    return respond


@contextlib.asynccontextmanager
async def slow_model(respond: Responder) -> AsyncIterator[str]:
    """`scripted_server` for tests that only need its URL."""
    async with scripted_server(respond) as (url, _bodies):
        yield url


@contextlib.contextmanager
def threaded_server(respond: Responder) -> Iterator[str]:
    """`scripted_server` on a loop of its own thread, for code that runs its own event loop
    (`manage.py ask`, a sync view); yields its /v1 URL."""
    loop = asyncio.new_event_loop()
    address: Future[str] = Future()
    stopping = asyncio.Event()

    async def serve() -> None:
        async with scripted_server(respond) as (url, _bodies):
            address.set_result(url)
            await stopping.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield address.result(timeout=10)
    finally:
        loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=10)
        loop.close()
