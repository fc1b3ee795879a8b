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


# A fence line (with its language tag), or a fence left inside a cut excerpt.
_FENCE_MARK = re.compile(r"^[ \t]*`{3,}[\w.+-]*[ \t]*(?:\n|$)|`{3,}", re.MULTILINE)


def fence_marks_removed(text: str) -> str:
    """An excerpt shown as plain text (a search snippet, a source card) keeps a block's lines
    and drops its fences, which are markup and no content."""
    return _FENCE_MARK.sub("", text)
