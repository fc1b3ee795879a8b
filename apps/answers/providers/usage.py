"""Token usage of every model call one turn makes, summed wherever those calls happen.

A turn's model calls are spread over stages and tasks (router, rewrite, expansion, composer,
small talk, follow-ups), and one chat model instance serves every concurrent turn of a
process. So the chat model adds each call's usage to the meter of the turn it runs for,
found through a context variable: asyncio tasks and the threads they hand work to (`db_call`,
`asyncio.to_thread`) inherit it, other turns never see it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass

from apps.answers.providers.chat import ChatMessage, ChatUsage

# The usual rule of thumb for English and Persian BPE vocabularies: about four characters
# per token. Used only when a server reports no usage, and then recorded as an estimate.
CHARS_PER_TOKEN = 4


@dataclass
class UsageMeter:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    estimated_calls: int = 0  # calls whose server reported no usage

    def add(self, usage: ChatUsage, *, estimated: bool) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.calls += 1
        self.estimated_calls += estimated

    @property
    def source(self) -> str:
        """ "reported", "estimated" or "partly estimated": how far the figures can be trusted."""
        if not self.estimated_calls:
            return "reported"
        return "estimated" if self.estimated_calls == self.calls else "partly estimated"


_current: ContextVar[UsageMeter | None] = ContextVar("chat_usage_meter", default=None)


def usage_meter_open(meter: UsageMeter) -> Token[UsageMeter | None]:
    """Count the model calls made from here on (and from tasks started here) into `meter`."""
    return _current.set(meter)


def usage_meter_close(token: Token[UsageMeter | None]) -> None:
    # An async generator may be finalised in another context than the one that opened the
    # meter; the meter then simply stays with that finished context.
    with contextlib.suppress(ValueError):
        _current.reset(token)


def usage_add(usage: ChatUsage, *, estimated: bool = False) -> None:
    meter = _current.get()
    if meter is not None:
        meter.add(usage, estimated=estimated)


def usage_estimate(messages: Sequence[ChatMessage], completion: str) -> ChatUsage:
    prompt_chars = sum(len(m.content) for m in messages)
    return ChatUsage(
        prompt_tokens=_tokens(prompt_chars), completion_tokens=_tokens(len(completion))
    )


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)  # rounded up: any text is at least one token
