"""Sentence boundaries in English and Persian text: one rule, with two explicit options.

Chunking, context budgets and the extractive composer split with the defaults. The
citation counter, which reads a model's answer, also takes the Persian full stop "۔" and
the closing guillemet "»" (`persian_marks`); chunking does not, so stored chunks keep their
boundaries. Abbreviations ("e.g.", "Dr.") do not end a sentence by default; the citation
counter, the audit page and the streaming composer pass `abbreviations=False`, so their
counts and cuts stay comparable with the turns already stored.

A stop inside brackets or quotes that opened within the sentence does not end it: in
'A follow-up ("who stars in it?") was rewritten' or "(e.g. fdisk. Or parted.) first" the
sentence goes on after the closer, and cutting there leaves two fragments that the composer
would quote or drop apart. It still ends one where the pair closes right after the stop and
a capital follows ('He said "go." Then'), and a sentence wholly in brackets or quotes ends at
its closer. Only a pair closed on the same line counts, so a stray "(" never swallows the
rest of a paragraph. A section number that starts a sentence ("9.6.2. Disk partition
configuration") is its label, not a sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence

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
_SECTION_LABEL = re.compile(r"\d+(?:\.\d+)+\.?")
# Straight single quotes are left out: they are apostrophes as often as quotes.
_PAIRS = {"(": ")", "[": "]", "“": "”", "«": "»", '"': '"'}


@functools.cache
def _boundary(persian_marks: bool) -> re.Pattern[str]:
    terminals = _TERMINALS + (_PERSIAN_TERMINALS if persian_marks else "")
    closers = _CLOSERS + (_PERSIAN_CLOSERS if persian_marks else "")
    # Terminal punctuation (plus closing quotes or brackets) ends a sentence only when
    # whitespace or the end follows, so "3.14" stays whole; a line break always ends one,
    # because list items, table rows and headings are line-based.
    return re.compile(rf"[{re.escape(terminals)}]+[{re.escape(closers)}]*(?=\s|\Z)|\n+")


def _boundaries(text: str, *, abbreviations: bool, persian_marks: bool) -> Iterator[re.Match[str]]:
    openers = _enclosing_openers(text)
    start = 0  # where the current sentence starts
    for match in _boundary(persian_marks).finditer(text):
        stop = match.group()
        if not stop.startswith("\n"):
            if abbreviations and stop.startswith(".") and _is_abbreviation(text, match.start()):
                continue
            if _section_label(text, start, match.start()):
                continue
            if _enclosed(text, start, match, openers.get(match.start(), ())):
                continue
        start = match.end()
        yield match


def _enclosed(text: str, start: int, stop: re.Match[str], pairs: Sequence[tuple[int, int]]) -> bool:
    """The stop is inside brackets or quotes opened after the sentence began, and the
    sentence goes on past them."""
    inner = [(o, c) for o, c in pairs if text[start:o].strip()]
    if not inner:
        return False
    closed_here = all(c < stop.end() for _, c in inner)
    return not (closed_here and text[stop.end() :].lstrip()[:1].isupper())


def _enclosing_openers(text: str) -> dict[int, list[tuple[int, int]]]:
    """For each stop character's offset inside closed pairs: those pairs' offsets."""
    found: dict[int, list[tuple[int, int]]] = {}
    offset = 0
    for line in text.split("\n"):
        for opened, closed in _line_pairs(line):
            for i in range(opened + 1, closed):
                if line[i] in _TERMINALS:
                    found.setdefault(offset + i, []).append((offset + opened, offset + closed))
        offset += len(line) + 1
    return found


def _line_pairs(line: str) -> list[tuple[int, int]]:
    """(opener, closer) offsets of the brackets and quotes closed within the line."""
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for i, char in enumerate(line):
        if stack and char == _PAIRS[stack[-1][0]]:
            pairs.append((stack.pop()[1], i))
        elif char in _PAIRS:
            stack.append((char, i))
        elif char in _PAIRS.values():
            # A closer with no opener on top ("1) first"): drop openers it may close.
            while stack and _PAIRS[stack[-1][0]] != char:
                stack.pop()
            if stack:
                pairs.append((stack.pop()[1], i))
    return pairs


def _section_label(text: str, start: int, dot: int) -> bool:
    """The stop ends a section number that is all the sentence holds so far."""
    return bool(_SECTION_LABEL.fullmatch(text[start : dot + 1].strip()))


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
