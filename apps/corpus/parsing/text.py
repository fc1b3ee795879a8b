"""Plain text: one block per paragraph, paragraphs separated by blank lines.

A paragraph that reads as code (a command run at a "$ " or "# " prompt, a configuration
stanza, an indented example; see `reads_as_code`) becomes a code block with its lines kept,
and code paragraphs in a row (a configuration file with blank lines in it) become one block.
"""

from __future__ import annotations

import re

from .blocks import PROMPT, BlockCollector
from .decode import decode_text
from .types import Extracted

BLANK_LINE = re.compile(r"\n[ \t\f\v]*\n")
_PROMPT = PROMPT
# How a line of configuration or code ends or starts: a brace, a statement's ";", a comment.
_CODE_END = re.compile(r"(?:[{};\\]|\*/)\s*$|^\s*[{}]")
_CODE_START = re.compile(r"^\s*(?://|/\*|#\S|\*/)")
_WORD = re.compile(r"[^\W\d_]{2,}")
_PROSE_WORDS = 6  # a line of this many words, mostly letters, is prose being wrapped
_PROSE_SHARE = 4  # code has at most one such line in four (an echoed message, say)


def split_paragraphs(text: str) -> list[str]:
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    return BLANK_LINE.split(normalised)


def parse_text(data: bytes) -> Extracted:
    collector = BlockCollector()
    code: list[str] = []
    previous = ""
    for paragraph in split_paragraphs(decode_text(data)):
        if paragraph.strip() and reads_as_code(paragraph, after=previous):
            code.append(paragraph)
            continue
        if code:
            collector.add_code("\n\n".join(code))
            code.clear()
        collector.add(paragraph)
        previous = paragraph if paragraph.strip() else previous
    if code:
        collector.add_code("\n\n".join(code))
    return Extracted(title=None, blocks=collector.blocks)


def reads_as_code(paragraph: str, *, after: str = "") -> bool:
    """Every line a prompted command; or hardly a line of wrapped prose and either some line shaped
    like code (a brace, a ";" at its end, a comment lead, a prompt among other lines) or the
    paragraph indented under prose that announces it ("... with some examples:")."""
    lines = _lines(paragraph)
    if not lines:
        return False
    if all(_PROMPT.match(line) for line in lines):
        return True
    if sum(_is_prose(line) for line in lines) * _PROSE_SHARE > len(lines):
        return False
    shaped = any(_CODE_END.search(line) or _CODE_START.match(line) for line in lines) or (
        len(lines) > 1 and any(_PROMPT.match(line) for line in lines)
    )
    # Indentation alone says nothing (a manual indents every description under its term);
    # indentation under an announcing line does.
    announced = _lines(after)
    return shaped or bool(
        announced
        and announced[-1].rstrip().endswith(":")
        and _indent(lines[0]) > _indent(announced[-1])
    )


def _lines(paragraph: str) -> list[str]:
    return [line.expandtabs(8) for line in paragraph.split("\n") if line.strip()]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_prose(line: str) -> bool:
    text = line.strip()
    if _CODE_START.match(text) or _PROMPT.match(text):
        return False  # a comment in the code (or a command), however wordy
    found = _WORD.findall(text)
    letters = sum(len(word) for word in found)
    wordy = len(found) >= _PROSE_WORDS and letters >= 0.75 * len(text.replace(" ", ""))
    return wordy and not _CODE_END.search(text)
