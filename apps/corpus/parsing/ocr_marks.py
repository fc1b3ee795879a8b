"""What Tesseract makes of the marks around code printed in a line, mended line by line.

Manuals print option names, paths and commands between marks (Markdown's backticks, quotes)
and often in a monospace face. Tesseract reads those marks as whatever glyph is nearest: an
opening backtick as `‘`, `~` or `*`, a closing one as `*` or `’`; it sets a name's extension
apart at its dot ("/etc/nsswitch. conf") and a scope's `::` apart at its middle
("APT::Update: :Post-Invoke"). Left so, the name is not the word a question or a search
types ("Post-Invoke" is found, "APT::Update::Post-Invoke" is not; "-i*" is no option), and the
mark read as `*` is a wildcard to a reader.
"""

from __future__ import annotations

import re

# A path's dot read as a sentence's end: a word of a path, a dot, then a short lower-case word.
# A sentence after a path opens with a capital.
_PATH_SPLIT_AT_DOT = re.compile(r"(/[\w./-]*\w\.) (?=[a-z][a-z0-9]{0,7}(?![\w/-]))")
# A scope's `::` read as two colons apart, inside a name ("Update: :Post-Invoke").
_SCOPE_SPLIT = re.compile(r"(?<=\w): :(?=[\w<])")
# A quoted name closed by a star: the opening mark, up to 60 characters with no other mark
# ("sudo -i"), the star straight after its last letter, digit or bracket. The star of a
# glob ("*.conf", "LC_*") opens or follows no such mark; a `~` before a `/` is a home folder.
_STAR_CLOSED = re.compile(r"([‘`*]|~(?!/))([^\s‘’`*~][^‘’`*~]{0,60}?[\w)}>\]])\*(?=[\s,.;:)]|$)")
# A mark read as `~` or `*` before a name that a `’` closes.
_OPENED_AMISS = re.compile(r"(?<![\w*~])(?:\*|~(?!/))([^\s‘’`*~][^‘’`*~]{0,60}?[\w)}>\]])’")


def line_mended(text: str) -> str:
    """The line with its names' marks and separators read back as printed."""
    text = _PATH_SPLIT_AT_DOT.sub(r"\1", text)
    text = _SCOPE_SPLIT.sub("::", text)
    text = _STAR_CLOSED.sub(lambda m: f"{_opening(m[1])}{m[2]}’", text)
    return _OPENED_AMISS.sub(r"‘\1’", text)


def _opening(mark: str) -> str:
    return "‘" if mark in "~*" else mark
