"""Sentence boundaries in English and Persian text: one rule, with two explicit options.

Chunking, context budgets and the extractive composer split with the defaults. The
citation counter, which reads a model's answer, also takes the Persian full stop "۔" and
the closing guillemet "»" (`persian_marks`); chunking does not, so stored chunks keep their
boundaries. Abbreviations ("e.g.", "Dr.") do not end a sentence by default; the citation
counter, the audit page and the streaming composer pass `abbreviations=False`, so their
counts and cuts stay comparable with the turns already stored.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

_TERMINALS = ".!?؟…"
_CLOSERS = "\"'”’)]"
_PERSIAN_TERMINALS = "۔"
_PERSIAN_CLOSERS = "»"
_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "al",
        "fig",
        "figs",
        "eq",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "no",
        "approx",
        "cf",
        "ca",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
    ]
)
_WORD_BEFORE_DOT = re.compile(r"([A-Za-z.]+)$")


@functools.cache
def _boundary(persian_marks: bool) -> re.Pattern[str]:
    terminals = _TERMINALS + (_PERSIAN_TERMINALS if persian_marks else "")
    closers = _CLOSERS + (_PERSIAN_CLOSERS if persian_marks else "")
    # Terminal punctuation (plus closing quotes or brackets) ends a sentence only when
    # whitespace or the end follows, so "3.14" stays whole; a line break always ends one,
    # because list items, table rows and headings are line-based.
    return re.compile(rf"[{re.escape(terminals)}]+[{re.escape(closers)}]*(?=\s|\Z)|\n+")


def _boundaries(text: str, *, abbreviations: bool, persian_marks: bool) -> Iterator[re.Match[str]]:
    for match in _boundary(persian_marks).finditer(text):
        if (
            abbreviations
            and match.group().startswith(".")
            and _is_abbreviation(text, match.start())
        ):
            continue
        yield match


def _is_abbreviation(text: str, dot: int) -> bool:
    word = _WORD_BEFORE_DOT.search(text[:dot])
    if not word:
        return False
    token = word.group(1).lower().strip(".")
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def sentence_spans(
    text: str, *, abbreviations: bool = True, persian_marks: bool = False
) -> list[tuple[int, int]]:
    """(start, end) offsets of each sentence that has any non-space text.

    A span starts at its first non-space character and ends after its closing punctuation
    or where its line breaks (so it may end in spaces); the text outside the spans is
    whitespace, or line breaks.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _boundaries(text, abbreviations=abbreviations, persian_marks=persian_marks):
        end = match.start() if match.group().startswith("\n") else match.end()
        spans.append((start, end))
        start = match.end()
    spans.append((start, len(text)))
    return [_lstripped(text, start, end) for start, end in spans if text[start:end].strip()]


def _lstripped(text: str, start: int, end: int) -> tuple[int, int]:
    return start + len(text[start:end]) - len(text[start:end].lstrip()), end


def split_sentences(
    text: str, *, abbreviations: bool = True, persian_marks: bool = False
) -> list[str]:
    """Sentences of ``text``, stripped; abbreviations and decimals stay whole."""
    spans = sentence_spans(text, abbreviations=abbreviations, persian_marks=persian_marks)
    return [text[start:end].rstrip() for start, end in spans]


def last_sentence_start(
    text: str, *, abbreviations: bool = True, persian_marks: bool = False
) -> int:
    """Where the text after the last finished sentence starts (past its spaces); 0 if none.

    Punctuation at the very end does not finish a sentence here: the text may be a prefix
    still streaming ("costs 3." before "14 euros"), or its final stop was cut off on purpose.
    """
    cut = 0
    for match in _boundaries(text, abbreviations=abbreviations, persian_marks=persian_marks):
        if match.end() < len(text) or match.group().startswith("\n"):
            cut = match.end()
    return len(text) - len(text[cut:].lstrip()) if cut else 0
