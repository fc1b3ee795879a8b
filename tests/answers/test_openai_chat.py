"""OpenAIChatModel against a real local model server, plus tiny scripted HTTP servers for
the failure shapes a real model will not produce on demand. The SDK is never mocked."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from apps.answers.providers.chat import (
    ChatBadResponse,
    ChatMessage,
    ChatSettings,
    ChatTimeout,
    ChatUnavailable,
    reply_json_object,
)
from apps.answers.providers.openai_chat import OpenAIChatModel
from tests.answers.chat_server import http_response, scripted_server, sse_chunk, sse_response
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers the fixture)

QUESTION = [
    ChatMessage(role="system", content="You are a helpful assistant."),
    ChatMessage(role="user", content="Name three colours and describe each one briefly."),
]


@pytest.fixture
async def make_model() -> AsyncIterator[Callable[..., OpenAIChatModel]]:
    models: list[OpenAIChatModel] = []

    def make(base_url: str, model: str = "fake", **overrides: Any) -> OpenAIChatModel:
        settings = ChatSettings(base_url=base_url, api_key="test-key", model=model, **overrides)
        models.append(OpenAIChatModel(settings))
        return models[-1]

    yield make
    for model in models:
        await model.aclose()


async def collect(model: OpenAIChatModel, pieces: list[str], **kwargs: Any) -> list[str]:
    async for piece in model.stream(messages=QUESTION, **kwargs):
        pieces.append(piece)
    return pieces


# --- the real server -------------------------------------------------------------------


@pytest.mark.llm
async def test_stream_yields_pieces_and_records_usage(
    llm_server: LocalLLMServer, make_model: Callable[..., OpenAIChatModel]
) -> None:
    model = make_model(llm_server.base_url, llm_server.model)

    pieces = await collect(model, [], max_tokens=24)

    assert len(pieces) >= 3
    assert all(pieces)
    usage = model.last_usage
    assert usage is not None
    assert usage.prompt_tokens > 0
    # Each streamed delta is at least one generated token.
    assert len(pieces) <= usage.completion_tokens <= 24
    assert model.name == llm_server.model


@pytest.mark.llm
async def test_complete_json_respects_an_enum_schema(
    llm_server: LocalLLMServer, make_model: Callable[..., OpenAIChatModel]
) -> None:
    model = make_model(llm_server.base_url, llm_server.model)
    colours = ["red", "green", "blue"]
    schema = {
        "type": "object",
        "properties": {"colour": {"type": "string", "enum": colours}},
        "required": ["colour"],
        "additionalProperties": False,
    }

    raw = await model.complete_json(
        messages=[ChatMessage(role="user", content="What colour is a clear sky? Reply in JSON.")],
        schema=schema,
        schema_name="colour_choice",
        max_tokens=32,
    )

    assert reply_json_object(raw)["colour"] in colours
    assert model.last_usage is not None


@pytest.mark.llm
async def test_first_token_timeout_raises_chat_timeout(
    llm_server: LocalLLMServer, make_model: Callable[..., OpenAIChatModel]
) -> None:
    model = make_model(
        llm_server.base_url,
        llm_server.model,
        first_token_timeout_s=0.001,
        max_retries_before_first_token=0,
    )

    with pytest.raises(ChatTimeout) as caught:
        await collect(model, [], max_tokens=8)

    assert caught.value.retryable


# --- connection failures and retries ---------------------------------------------------


@pytest.fixture
def closed_port() -> Iterator[int]:
    # Bound but not listening: connects are refused, and no other process can take the port.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


async def test_closed_port_raises_chat_unavailable_quickly(
    closed_port: int, make_model: Callable[..., OpenAIChatModel]
) -> None:
    model = make_model(f"http://127.0.0.1:{closed_port}/v1")
    started = time.monotonic()

    with pytest.raises(ChatUnavailable) as caught:
        await collect(model, [])

    assert caught.value.retryable
    assert time.monotonic() - started < 2.0


# A streaming head that promises far more body than will ever be sent.
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n"
)


async def hang_up(body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Read the request and close the connection without answering."""


@pytest.mark.parametrize("retries", [0, 2])
async def test_retries_happen_before_the_first_token(
    retries: int, make_model: Callable[..., OpenAIChatModel]
) -> None:
    async with scripted_server(hang_up) as (url, bodies):
        model = make_model(url, max_retries_before_first_token=retries)
        with pytest.raises(ChatUnavailable):
            await collect(model, [])

    assert len(bodies) == 1 + retries


async def test_no_retry_after_the_first_token(make_model: Callable[..., OpenAIChatModel]) -> None:
    async def one_token_then_drop(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        # One token, then hang up long before the promised length: the stream breaks mid-answer.
        writer.write(STREAM_HEAD + sse_chunk("Hello"))
        await writer.drain()

    pieces: list[str] = []
    async with scripted_server(one_token_then_drop) as (url, bodies):
        model = make_model(url, max_retries_before_first_token=3)
        with pytest.raises(ChatUnavailable):
            await collect(model, pieces)

    assert pieces == ["Hello"]
    assert len(bodies) == 1


async def test_total_timeout_applies_after_the_first_token(
    make_model: Callable[..., OpenAIChatModel],
) -> None:
    async def one_token_then_stall(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(STREAM_HEAD + sse_chunk("Hello"))
        await writer.drain()
        await reader.read()  # until the client gives up and closes

    pieces: list[str] = []
    async with scripted_server(one_token_then_stall) as (url, _):
        model = make_model(url, timeout_s=0.5, max_retries_before_first_token=3)
        started = time.monotonic()
        with pytest.raises(ChatTimeout):
            await collect(model, pieces)

    assert pieces == ["Hello"]
    assert 0.4 < time.monotonic() - started < 2.0


async def test_first_token_timeout_covers_a_stream_that_opened_but_says_nothing_and_is_not_retried(
    make_model: Callable[..., OpenAIChatModel],
) -> None:
    async def role_then_stall(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        # Headers and a role-only delta arrive at once; no text ever follows.
        writer.write(STREAM_HEAD + sse_chunk(None))
        await writer.drain()
        await reader.read()

    async with scripted_server(role_then_stall) as (url, bodies):
        model = make_model(
            url, timeout_s=5.0, first_token_timeout_s=1.0, max_retries_before_first_token=1
        )
        started = time.monotonic()
        with pytest.raises(ChatTimeout):
            await collect(model, [])

    # One attempt of 1 s, far below the 5 s total budget. Before: a second request, which
    # a single-slot server queues behind the first one it is still reading (issue 24).
    assert len(bodies) == 1
    assert time.monotonic() - started < 1.9


# --- error mapping ---------------------------------------------------------------------


async def test_stream_options_rejection_falls_back_and_is_remembered(
    make_model: Callable[..., OpenAIChatModel],
) -> None:
    async def picky(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if b"stream_options" in body:
            writer.write(http_response(400, b'{"error": {"message": "unknown stream_options"}}'))
        else:
            writer.write(sse_response(sse_chunk(None), sse_chunk("Hi"), sse_chunk(" there")))
        await writer.drain()

    async with scripted_server(picky) as (url, bodies):
        model = make_model(url)
        assert await collect(model, []) == ["Hi", " there"]
        assert await collect(model, []) == ["Hi", " there"]

    assert [b"stream_options" in body for body in bodies] == [True, False, False]
    assert model.last_usage is None


@pytest.mark.parametrize(
    ("status", "error", "retryable", "attempts"),
    [(503, ChatUnavailable, True, 2), (404, ChatBadResponse, False, 1)],
)
async def test_http_status_mapping(
    status: int,
    error: type[Exception],
    retryable: bool,
    attempts: int,
    make_model: Callable[..., OpenAIChatModel],
) -> None:
    async def fail(body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(http_response(status, b'{"error": {"message": "nope"}}'))
        await writer.drain()

    async with scripted_server(fail) as (url, bodies):
        model = make_model(url, max_retries_before_first_token=1)
        with pytest.raises(error) as caught:
            await model.complete_json(messages=QUESTION, schema={"type": "object"}, schema_name="x")

    assert getattr(caught.value, "retryable", None) is retryable
    assert len(bodies) == attempts


@pytest.mark.parametrize(
    "events",
    [
        [sse_chunk(None), b"data: [DONE]\n\n"],  # no text at all
        [b"data: this is not json\n\n"],
    ],
    ids=["empty", "garbage"],
)
async def test_unusable_streams_raise_bad_response(
    events: list[bytes], make_model: Callable[..., OpenAIChatModel]
) -> None:
    async def answer(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(sse_response(*events))
        await writer.drain()

    async with scripted_server(answer) as (url, bodies):
        model = make_model(url)
        with pytest.raises(ChatBadResponse) as caught:
            await collect(model, [])

    assert not caught.value.retryable
    assert len(bodies) == 1


async def test_an_empty_api_key_is_allowed_for_local_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    model = OpenAIChatModel(ChatSettings(base_url="http://127.0.0.1:9/v1", api_key="", model="m"))

    assert model._client.api_key != "sk-must-not-leak"
    await model.aclose()


def test_settings_are_validated_once() -> None:
    with pytest.raises(ValueError, match="timeouts"):
        ChatSettings(base_url="http://x/v1", api_key="", model="m", first_token_timeout_s=0)
    with pytest.raises(ValueError, match="max_retries"):
        ChatSettings(
            base_url="http://x/v1", api_key="", model="m", max_retries_before_first_token=-1
        )
