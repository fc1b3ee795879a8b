"""The one written form of a code block: a fenced Markdown block.

Chunking stores code this way, structure.py reads it back, and the composer quotes it so;
the chat and the source preview render it as code.
"""

from __future__ import annotations

import re

_BACKTICK_RUN = re.compile(r"`{3,}")


def fenced(code: str) -> str:
    """`code` between fences longer than any run of backticks inside it."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(code)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code}\n{fence}"
