"""Group tiny model tokens into readable pieces before they go to the client.

Sending every token as its own event floods the socket and makes the answer
flicker; sending the whole answer at the end defeats streaming. The coalescer
holds text until a minimum is buffered and then cuts at the last sentence or
clause boundary, so pieces end where a reader would pause. It knows nothing
about time: the caller flushes on a timer (RAG_STREAM_FLUSH_S after text began to wait, so a
slow model's words appear as they come), before a citation event and at the end.
"""

from __future__ import annotations

import re

# Punctuation counts only when whitespace follows, so "3.14" or "a,b" are not cut;
# the whitespace goes with the piece so the next one starts with a word.
_BOUNDARY = re.compile(r"[.!?؟;:,،؛…]\s|\n")
_WHITESPACE = re.compile(r"\s")


class Coalescer:
    def __init__(self, *, min_chars: int = 60, max_chars: int = 240) -> None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be positive, got {max_chars}")
        if not 0 <= min_chars <= max_chars:
            raise ValueError(f"min_chars must be in 0..max_chars, got {min_chars}")
        self._min_chars = min_chars
        self._max_chars = max_chars
        self._buffer = ""

    def feed(self, text: str) -> list[str]:
        """Buffer ``text``; return the pieces that are ready to send."""
        self._buffer += text
        pieces: list[str] = []
        while len(self._buffer) >= self._min_chars:
            cut = self._cut_at()
            if cut is None:
                break
            pieces.append(self._buffer[:cut])
            self._buffer = self._buffer[cut:]
        return pieces

    @property
    def held(self) -> bool:
        """Whether any text waits to be sent."""
        return bool(self._buffer)

    def flush(self) -> list[str]:
        """Return whatever is held (always shorter than ``max_chars``)."""
        held, self._buffer = self._buffer, ""
        return [held] if held else []

    def _cut_at(self) -> int | None:
        """Where to end the next piece, or None to keep holding."""
        window = self._buffer[: self._max_chars]
        cut = _last_end(_BOUNDARY, window)
        if cut is not None:
            return cut
        if len(self._buffer) < self._max_chars:
            return None
        # Forced: break between words if the window has any whitespace at all.
        return _last_end(_WHITESPACE, window) or self._max_chars


def _last_end(pattern: re.Pattern[str], text: str) -> int | None:
    end = None
    for match in pattern.finditer(text):
        end = match.end()
    return end
