"""Headings told by how a page prints them, for pages whose markup is lost or never was: a
short line printed larger than the page's body text, or a Markdown heading printed as text
("## Wire protocol").

A scan loses what its original's markup said, and a PDF without an outline (bookmarks) names
no heading either; with them goes the heading path that chunking cuts at and that retrieval
weighs above body text. The scanned copies of the real-documents set had no heading at all
where their originals had one per section (docs/benchmarks.md). A text layer states each run's
font size; on a scan size is measured per word (a line's box stretches to any bracket or
accent in it), and only a line standing alone in Tesseract's paragraph counts, so a table row
whose ruling was read as letters never does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median

from .blocks import PROMPT, collapse_whitespace
from .ocr_words import OcrWord

LineKey = tuple[int, int, int]  # (block, paragraph, line) as Tesseract numbered them

# "## Wire protocol"; "# Index targets" only where it is no command at a root prompt (PROMPT).
MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(\S.*?)(?:\s+#+)?\s*$")
# A line whose words stand this much taller than the body's is printed in a heading's size.
# Chromium prints h1 at 2x the body, h2 at 1.5x, h3 at 1.17x: an h3, like bold body text, is
# too close to the body to be told from it by height.
HEADING_HEIGHT_RATIO = 1.3
# A text layer states each run's size exactly: an h3 (1.17x) stands out from the body there.
TEXT_LAYER_HEADING_RATIO = 1.15
# A numbered heading's level is its number's depth ("5.1." a 2, "5.5.1." a 3); another's is 1
# from this height over the body up (a chapter's title), else 2. Heights between sizes are too
# close to order more levels by: on scanned pages h2 and h3 measured from 1.1x to 1.6x.
TOP_LEVEL_RATIO = 1.75
SECTION_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
# On a scan a heading told by its size has at least two words: a single large word is as often
# an admonition's label ("Warning", "Tip") or a table's header read large as a heading.
MIN_SCANNED_HEADING_WORDS = 2
MAX_HEADING_WORDS = 12
# A Markdown heading says it is one, and a FAQ's headings are whole questions; a longer line
# after "##" is a configuration's comment more often than a heading.
MAX_MARKDOWN_HEADING_WORDS = 24
# The body's height is read from lines of at least this many words, and needs this many lines.
BODY_LINE_WORDS = 4
MIN_BODY_LINES = 3
# A heading is read well: a logo or an icon read as letters scores low.
MIN_HEADING_CONFIDENCE = 80.0
# A text layer's body size is read from a page with at least this many letters in it.
MIN_BODY_LETTERS = 200
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class PrintedHeading:
    level: int
    title: str


def markdown_heading(line: str) -> PrintedHeading | None:
    found = MARKDOWN_HEADING.match(line)
    if found is None or len(found[2].split()) > MAX_MARKDOWN_HEADING_WORDS:
        return None
    if len(found[1]) == 1 and PROMPT.match(line):
        return None
    return PrintedHeading(len(found[1]), found[2])


def printed_headings(
    lines: Mapping[LineKey, Sequence[OcrWord]], texts: Mapping[LineKey, str]
) -> dict[LineKey, PrintedHeading]:
    """The page's heading lines by their key: Markdown ones, then those printed larger."""
    found = {key: mark for key, text in texts.items() if (mark := markdown_heading(text))}
    body = _body_height(lines)
    if body is None:
        return found
    lines_per_paragraph: dict[tuple[int, int], int] = {}
    for key in lines:
        lines_per_paragraph[key[:2]] = lines_per_paragraph.get(key[:2], 0) + 1
    for key, words in lines.items():
        if key in found or lines_per_paragraph[key[:2]] > 1:
            continue
        ratio = median(w.height for w in words) / body
        if ratio >= HEADING_HEIGHT_RATIO and _reads_as_title(words, texts[key]):
            found[key] = PrintedHeading(heading_level(texts[key], ratio), texts[key])
    return found


def _body_height(lines: Mapping[LineKey, Sequence[OcrWord]]) -> float | None:
    body = [line for line in lines.values() if len(line) >= BODY_LINE_WORDS]
    if len(body) < MIN_BODY_LINES:
        return None
    return float(median(w.height for line in body for w in line))


def _reads_as_title(words: Sequence[OcrWord], text: str) -> bool:
    return (
        len(words) >= MIN_SCANNED_HEADING_WORDS
        and _titled(text)
        and median(w.confidence for w in words) >= MIN_HEADING_CONFIDENCE
    )


def sized_headings(runs: Sequence[tuple[float, str]]) -> list[PrintedHeading]:
    """The headings of a page's text layer, from its text runs and their font sizes in reading
    order: runs printed larger than the page's body text (the size most of its letters have),
    one heading per stretch of runs of one size."""
    letters: Counter[float] = Counter()
    for size, text in runs:
        letters[size] += len(text.strip())
    if not letters:
        return []
    body, body_letters = letters.most_common(1)[0]
    if body <= 0 or body_letters < MIN_BODY_LETTERS:
        return []
    stretches: list[tuple[float, list[str]]] = []
    for size, text in runs:
        if not text.strip():
            continue
        if stretches and stretches[-1][0] == size:
            stretches[-1][1].append(text)
        else:
            stretches.append((size, [text]))
    found = []
    for size, texts in stretches:
        title = collapse_whitespace(" ".join(texts))
        if size >= TEXT_LAYER_HEADING_RATIO * body and _titled(title):
            found.append(PrintedHeading(heading_level(title, size / body), title))
    return found


def _titled(text: str) -> bool:
    return (
        len(text.split()) <= MAX_HEADING_WORDS
        and _LETTER.search(text) is not None
        and not text.endswith((",", ";"))
    )


def heading_level(title: str, ratio: float) -> int:
    """A numbered heading's depth, else 1 or 2 by its size over the body's."""
    number = SECTION_NUMBER.match(title)
    if number is not None:
        return len(number[1].split("."))
    return 1 if ratio >= TOP_LEVEL_RATIO else 2
