"""The slice of a conversation the router gets to see."""

from __future__ import annotations

from collections.abc import Sequence

from apps.answers.routing.types import HistoryMessage


def conversation_window(
    messages: Sequence[HistoryMessage], *, size: int = 6, max_chars: int = 600
) -> tuple[HistoryMessage, ...]:
    """Return the last `size` messages, each cut to `max_chars` characters.

    Bounded on both axes so a long conversation or a pasted document cannot blow up
    the classifier's prompt (and its latency).
    """
    if size < 0 or max_chars < 0:
        raise ValueError("size and max_chars must be >= 0")
    if size == 0:
        return ()
    return tuple(
        HistoryMessage(role=message.role, text=message.text[:max_chars])
        for message in messages[-size:]
    )
