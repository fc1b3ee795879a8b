"""Whether a title is text a person can read: a PDF's UTF-16 title read as bytes shows as a
hex dump or control characters, and a page must show the file's name instead."""

from __future__ import annotations

import re
import unicodedata

# A PDF's UTF-16 or hex-string title read as bytes: "FEFF00540069...", "<FEFF0054...>".
_HEX_RUN = re.compile(r"[<(]?\b[0-9A-Fa-f]{16,}\b[>)]?")
_UNREADABLE = frozenset({"Cc", "Cs", "Co", "Cn"})


def readable_title(title: str, *, filename: str) -> str:
    """The title, unless it is not text a person can read (a hex dump, control or replacement
    characters, hardly any letters): then the file's name, which always is."""
    shown = title.strip()
    if not shown or _HEX_RUN.search(shown):
        return filename
    if any(unicodedata.category(c) in _UNREADABLE or c == "\ufffd" for c in shown):
        return filename
    letters = sum(c.isalpha() for c in shown)
    return title if letters * 2 >= len(shown.replace(" ", "")) else filename
