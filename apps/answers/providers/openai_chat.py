"""A `ChatModel` for any OpenAI-compatible chat endpoint.

OpenAI, vLLM, Ollama, llama.cpp server and xllamacpp all speak this protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncGenerator, Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletionChunk,
    ChatCompletionMessageParam,
)

from apps.answers.providers.chat import (
    ChatBadResponse,
    ChatError,
    ChatMessage,
    ChatSettings,
    ChatStream,
    ChatTimeout,
    ChatUnavailable,
    ChatUsage,
)
from apps.answers.providers.usage import usage_add, usage_estimate

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

# Errors the SDK raises while sending or reading; a ValueError is an undecodable stream event.
_SDK_ERRORS = (openai.OpenAIError, ValueError)


@dataclass(frozen=True)
class _Request:
    messages: list[ChatCompletionMessageParam]
    temperature: float
    max_tokens: int | None


@dataclass
class _Call:
    """What one call learnt on its way: the usage the server reported and the text it got."""

    messages: Sequence[ChatMessage]
    usage: ChatUsage | None = None
    text: list[str] = field(default_factory=list)
    answered: bool = False  # the server took the request (a refused connection spent nothing)

    def count(self) -> None:
        # Every answered call counts towards the turn, an interrupted one too: its tokens
        # were spent.
        if not self.answered:
            return
        if self.usage is not None:
            usage_add(self.usage)
        else:
            usage_add(usage_estimate(self.messages, "".join(self.text)), estimated=True)


class OpenAIChatModel:
    """Streams and structured completions with bounded time and typed failures.

    `last_usage` describes the latest call on this instance: use one instance per
    concurrent caller, or read it right after the call.
    """

    def __init__(self, settings: ChatSettings) -> None:
        self.name = settings.model
        self._settings = settings
        # One client per event loop: its pooled connections belong to the loop that opened
        # them, and a worker calls through `async_to_sync`, a new loop every time.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()
        self._last_usage: ChatUsage | None = None
        # Flipped once a server has rejected `stream_options`, so later calls skip the probe.
        self._send_stream_options = True

    @property
    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._client_new()
        return client

    def _client_new(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=self._settings.base_url,
            # Local servers need no key. An empty one would make the SDK fall back to
            # OPENAI_API_KEY and send that secret to whatever server is configured.
            api_key=self._settings.api_key or "no-key",
            # Retries are ours (only before the first token), so the SDK must not add its own.
            max_retries=0,
            timeout=self._settings.timeout_s,
            # Our own HTTP client: the SDK's default one closes itself when garbage collected,
            # on whatever loop runs then, and a loop that has closed since makes that fail with
            # "Event loop is closed". Unclosed, its sockets are simply released.
            http_client=openai.DefaultAsyncHttpxClient(timeout=self._settings.timeout_s),
        )

    @property
    def last_usage(self) -> ChatUsage | None:
        return self._last_usage

    async def aclose(self) -> None:
        """Close the client of the running loop (a short-lived loop calls this before it ends)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def stream(
        self,
        *,
        messages: Sequence[ChatMessage],
        temperature: float = 0.2,
        max_tokens: int | None = None,
    ) -> ChatStream:
        request = _Request(_message_params(messages), temperature, max_tokens)
        return ChatStream(lambda stream: self._stream(stream, request, _Call(messages)))

    async def _stream(
        self, stream: ChatStream, request: _Request, call: _Call
    ) -> AsyncGenerator[str, None]:
        self._last_usage = None
        deadline = _now() + self._settings.timeout_s
        retries_left = self._settings.max_retries_before_first_token
        try:
            while True:
                try:
                    async with contextlib.aclosing(
                        self._stream_attempt(request, deadline, stream, call)
                    ) as pieces:
                        async for piece in pieces:
                            yield piece
                    return
                except ChatError as exc:
                    # Once text reached the caller a retry would repeat it: never retry then.
                    if call.text or not _may_retry(exc, retries_left, deadline):
                        raise
                    retries_left -= 1
                    logger.warning("chat stream failed before the first token, retrying: %s", exc)
        finally:
            call.count()

    async def complete_json(
        self,
        *,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> str:
        self._last_usage = None
        request = _Request(_message_params(messages), temperature, max_tokens)
        deadline = _now() + self._settings.timeout_s
        retries_left = self._settings.max_retries_before_first_token
        call = _Call(messages)
        try:
            while True:
                try:
                    return await self._complete_json_attempt(
                        request, schema, schema_name, deadline, call
                    )
                except ChatError as exc:
                    if not _may_retry(exc, retries_left, deadline):
                        raise
                    retries_left -= 1
                    logger.warning("chat JSON completion failed, retrying: %s", exc)
        finally:
            call.count()

    async def _stream_attempt(
        self, request: _Request, deadline: float, stream: ChatStream, call: _Call
    ) -> AsyncGenerator[str, None]:
        first_deadline = min(deadline, _now() + self._settings.first_token_timeout_s)
        chunks = await _by(first_deadline, self._open_stream(request), "a first token")
        call.answered = True
        try:
            while True:
                step_deadline = deadline if call.text else first_deadline
                waiting_for = "the rest of the answer" if call.text else "a first token"
                chunk = await _by(step_deadline, anext(chunks, None), waiting_for)
                if chunk is None:
                    break
                self._record_usage(chunk.usage, call)
                stream.finish_reason = _finish_reason(chunk) or stream.finish_reason
                text = _delta_text(chunk)
                if text:
                    call.text.append(text)
                    yield text
            if not call.text:
                raise ChatBadResponse("the model returned an empty completion")
        finally:
            await chunks.close()

    async def _open_stream(self, request: _Request) -> openai.AsyncStream[ChatCompletionChunk]:
        if self._send_stream_options:
            try:
                return await self._create_stream(request, with_usage=True)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                # Some OpenAI-compatible servers reject `stream_options`; usage is nice to
                # have, the answer is not optional. If the retry fails too, that error wins.
                logger.info("server rejected stream_options, retrying without: %s", exc)
                stream = await self._create_stream(request, with_usage=False)
                self._send_stream_options = False
                return stream
        return await self._create_stream(request, with_usage=False)

    async def _create_stream(
        self, request: _Request, *, with_usage: bool
    ) -> openai.AsyncStream[ChatCompletionChunk]:
        return await self._client.chat.completions.create(
            model=self._settings.model,
            messages=request.messages,
            temperature=request.temperature,
            max_tokens=_given(request.max_tokens),
            stream=True,
            stream_options={"include_usage": True} if with_usage else openai.omit,
        )

    async def _complete_json_attempt(
        self,
        request: _Request,
        schema: Mapping[str, Any],
        schema_name: str,
        deadline: float,
        call: _Call,
    ) -> str:
        completion = await _by(
            deadline,
            self._client.chat.completions.create(
                model=self._settings.model,
                messages=request.messages,
                temperature=request.temperature,
                max_tokens=_given(request.max_tokens),
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": dict(schema), "strict": True},
                },
            ),
            "a JSON completion",
        )
        call.answered = True
        self._record_usage(completion.usage, call)
        content = completion.choices[0].message.content if completion.choices else None
        if not content or not content.strip():
            raise ChatBadResponse("the model returned an empty JSON completion")
        call.text.append(content)
        return content

    def _record_usage(self, usage: CompletionUsage | None, call: _Call) -> None:
        if usage is not None:
            call.usage = self._last_usage = ChatUsage(
                prompt_tokens=usage.prompt_tokens or 0,
                completion_tokens=usage.completion_tokens or 0,
            )


def _now() -> float:
    return asyncio.get_running_loop().time()


def _may_retry(exc: ChatError, retries_left: int, deadline: float) -> bool:
    # Never after a timeout: the server took the request and may still be working on it
    # (closing our connection does not stop a llama.cpp slot reading its prompt), so on a
    # single-slot server the retry would only queue behind the request it replaces.
    timed_out = isinstance(exc, ChatTimeout)
    return exc.retryable and not timed_out and retries_left > 0 and _now() < deadline


def _given(value: int | None) -> int | openai.Omit:
    # `None` would be sent as JSON null, which some servers reject; leave the field out.
    return openai.omit if value is None else value


async def _by(deadline: float, awaitable: Awaitable[_T], waiting_for: str) -> _T:
    """Await with an absolute loop-time deadline, translating every failure to a ChatError.

    The deadline wraps each single await, never a `yield`: a timeout held open across a
    yield would cancel the consumer's code instead of ours.
    """
    try:
        async with asyncio.timeout_at(deadline):
            return await awaitable
    except TimeoutError as exc:
        raise ChatTimeout(f"no {waiting_for} within the time limit") from exc
    except _SDK_ERRORS as exc:
        raise _translate(exc) from exc


def _translate(exc: Exception) -> ChatError:
    # APITimeoutError subclasses APIConnectionError, so it must be tested first.
    if isinstance(exc, openai.APITimeoutError):
        return ChatTimeout(f"chat server timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return ChatUnavailable(f"chat server unreachable: {exc}")
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code >= 500:
            return ChatUnavailable(f"chat server error {exc.status_code}: {exc.message}")
        return ChatBadResponse(
            f"chat server refused the request ({exc.status_code}): {exc.message}",
            retryable=False,
        )
    return ChatBadResponse(f"unusable answer from the chat server: {exc}")


def _finish_reason(chunk: ChatCompletionChunk) -> str | None:
    try:
        reason = chunk.choices[0].finish_reason if chunk.choices else None
    except (AttributeError, IndexError, TypeError):
        return None
    return reason if isinstance(reason, str) else None


def _delta_text(chunk: ChatCompletionChunk) -> str:
    # Chunks are built without validation, so a non-conforming server shows up here.
    try:
        content = chunk.choices[0].delta.content if chunk.choices else None
    except (AttributeError, IndexError, TypeError) as exc:
        raise ChatBadResponse("malformed stream chunk from the chat server") from exc
    if content is not None and not isinstance(content, str):
        raise ChatBadResponse("stream chunk content is not text")
    return content or ""


def _message_params(messages: Sequence[ChatMessage]) -> list[ChatCompletionMessageParam]:
    params: list[ChatCompletionMessageParam] = []
    for message in messages:
        if message.role == "system":
            params.append({"role": "system", "content": message.content})
        elif message.role == "user":
            params.append({"role": "user", "content": message.content})
        else:
            params.append({"role": "assistant", "content": message.content})
    return params
