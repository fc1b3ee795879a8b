"""The chat-model contract the answer path depends on, independent of any SDK or server."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

# The finish reason of a reply cut off by the token limit (`max_tokens`), not ended by the model.
FINISH_LENGTH = "length"


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatUsage:
    prompt_tokens: int
    completion_tokens: int


class ChatError(Exception):
    """A chat call failed; `retryable` tells the caller whether trying again may help."""

    default_retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        self.retryable: bool = self.default_retryable if retryable is None else retryable


class ChatTimeout(ChatError):
    default_retryable = True


class ChatUnavailable(ChatError):
    """Connection refused, DNS failure, dropped connection or a 5xx answer."""

    default_retryable = True


class ChatBadResponse(ChatError):
    """The server answered, but not usefully: garbage, empty, a 4xx or a schema violation."""


class ChatStream:
    """The pieces of one streamed reply. Once they are all read, `finish_reason` tells why the
    reply ended ("stop", "length", ...; None when the server did not say)."""

    def __init__(self, pieces: Callable[[ChatStream], AsyncGenerator[str, None]]) -> None:
        self.finish_reason: str | None = None
        self._pieces = pieces(self)

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> str:
        return await anext(self._pieces)

    async def aclose(self) -> None:
        await self._pieces.aclose()


def stream_finish_reason(stream: AsyncIterator[str]) -> str | None:
    """The finish reason of a finished stream; None for a chat model that does not report one."""
    return getattr(stream, "finish_reason", None)


class ChatModel(Protocol):
    # The model id, recorded on every turn it serves.
    name: str

    # Declared without `async` so that an `async def ... yield` implementation matches it.
    def stream(
        self,
        *,
        messages: Sequence[ChatMessage],
        temperature: float = 0.2,
        max_tokens: int | None = None,
    ) -> AsyncIterator[str]: ...

    async def complete_json(
        self,
        *,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> str: ...

    @property
    def last_usage(self) -> ChatUsage | None: ...


@dataclass(frozen=True)
class ChatSettings:
    base_url: str
    api_key: str
    model: str
    timeout_s: float = 30.0
    first_token_timeout_s: float = 15.0
    max_retries_before_first_token: int = 1

    def __post_init__(self) -> None:
        # Validated once here so a bad configuration fails at start-up, not mid-answer.
        if not self.base_url.strip():
            raise ValueError("ChatSettings.base_url must not be empty")
        if not self.model.strip():
            raise ValueError("ChatSettings.model must not be empty")
        if self.timeout_s <= 0 or self.first_token_timeout_s <= 0:
            raise ValueError("ChatSettings timeouts must be positive")
        if self.max_retries_before_first_token < 0:
            raise ValueError("ChatSettings.max_retries_before_first_token must be >= 0")


_FENCED = re.compile(r"```[\w-]*[ \t]*\n?(.*?)```", re.DOTALL)


def reply_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model reply, or ValueError when there is none.

    Small models wrap JSON in ```json fences or add chatter around it, sometimes with a
    brace of their own first ("{not json} then {...}"): each `{` is tried in turn, so the
    first one that opens a whole object wins. A truncated object is not repaired.
    """
    fenced = _FENCED.search(text)
    body = fenced.group(1) if fenced is not None else text
    decoder = json.JSONDecoder()
    start = body.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(body, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = body.find("{", start + 1)
    raise ValueError("no JSON object in the model reply")
