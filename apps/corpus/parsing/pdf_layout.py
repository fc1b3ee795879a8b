"""A PDF page read by where its characters sit (pdfplumber): tables as rows, the prose between
them in reading position, and right-to-left lines restored to reading order.

pypdf's plain text (pdf.py) is fast but knows nothing of ruled tables, and follows the content
stream, which a tool such as Chromium writes with Persian words in visual (left-to-right)
order. pdfplumber is several times slower, so only pages that need it are read this way: the
first `table_pages` of a document are searched for tables, and a page with Arabic-script text
is always re-read by position.
"""

from __future__ import annotations

import io
import itertools
import logging
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import pdfplumber
from bidi import get_display

from .blocks import collapse_whitespace

# Arabic-script letters (Persian, Arabic, Urdu) and Hebrew: a line holding them is read RTL.
RTL_LETTERS = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
PRESENTATION_FORMS = re.compile("[\ufb50-\ufdff\ufe70-\ufeff]+")
# A table needs a header and one row, each of two cells, to be worth keeping as a table.
MIN_TABLE_ROWS, MIN_TABLE_COLUMNS = 2, 2
CELL_SEPARATOR = " | "
# pdfminer warns on every font lacking optional metrics (Chromium's fonts), which says nothing
# about the text; its errors still show.
logging.getLogger("pdfminer").setLevel(logging.ERROR)
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageSegment:
    """Prose (lines as pypdf would give them) or a table's rows, in reading position."""

    text: str = ""
    rows: tuple[tuple[str, ...], ...] = ()


def has_rtl(text: str) -> bool:
    return RTL_LETTERS.search(text) is not None


class PdfLayout:
    """Opens the PDF in pdfplumber once, on the first page that needs it."""

    def __init__(self, *, data: bytes, table_pages: int) -> None:
        self._data = data
        self.table_pages = table_pages
        self._pdf: Any = None
        self._broken = False

    def segments(self, number: int, *, stream_text: str) -> list[PageSegment] | None:
        """Page `number` by position, or None when pypdf's `stream_text` is already right, or
        when pdfminer cannot read what pypdf could: the page keeps its plain text then."""
        rtl = has_rtl(stream_text)
        if self._broken or (number > self.table_pages and not rtl):
            return None
        try:
            page = self._page(number)
            try:
                tables = _tables(page) if number <= self.table_pages else []
                return _split(page, tables) if tables or rtl else None
            finally:
                page.close()  # pdfplumber caches every page's objects until told otherwise
        except Exception:
            self._broken = True  # one damaged structure is enough: no more tries per page
            logger.warning("Page %s could not be laid out; reading plain text", number)
            return None

    def _page(self, number: int) -> Any:
        if self._pdf is None:
            self._pdf = pdfplumber.open(io.BytesIO(self._data))
        return self._pdf.pages[number - 1]

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()


def _tables(page: Any) -> list[Any]:
    found = [t for t in page.find_tables() if _rows(t)]
    return sorted(found, key=lambda table: table.bbox[1])


def _rows(table: Any) -> tuple[tuple[str, ...], ...]:
    rows = [tuple(_cell(cell) for cell in row) for row in table.extract()]
    rows = [row for row in rows if any(row)]
    if len(rows) < MIN_TABLE_ROWS or max(len(row) for row in rows) < MIN_TABLE_COLUMNS:
        return ()
    return tuple(rows)


def _cell(value: object) -> str:
    # A cell's own line breaks are wrapping, and "|" would read as a cell boundary.
    return reading_order(collapse_whitespace(str(value or "")).replace("|", "/"))


def _split(page: Any, tables: list[Any]) -> list[PageSegment]:
    """The page cut across its width above, between and below its tables, top to bottom."""
    x0, top, x1, bottom = page.bbox
    segments: list[PageSegment] = []
    for table in tables:
        above = _band(page, (x0, top, x1, table.bbox[1]))
        if above:
            segments.append(PageSegment(text=above))
        segments.append(PageSegment(rows=_rows(table)))
        top = max(top, table.bbox[3])
    rest = _band(page, (x0, top, x1, bottom))
    if rest:
        segments.append(PageSegment(text=rest))
    return segments


def _band(page: Any, box: tuple[float, float, float, float]) -> str:
    if box[3] - box[1] <= 0:
        return ""
    text = page.crop(box).extract_text() or ""
    return "\n".join(reading_order(line) for line in text.split("\n"))


def reading_order(line: str) -> str:
    """One line laid out left to right by position, in reading (logical) order.

    A line holding right-to-left letters is shown with its RTL runs reversed and its embedded
    LTR runs (numbers, Latin words) kept; the Unicode bidirectional algorithm (python-bidi) is
    what produced that visual order, and for a right-to-left line with embedded left-to-right
    runs (two embedding levels) its reordering is its own inverse, so running it on the visual
    line gives back the logical one. The letters' joining forms, where the PDF keeps them,
    are the check that the line really is visual: a glyph joined on its left comes before its
    neighbour in visual order and after it in reading order.
    """
    if not has_rtl(line) or joining_order(line) == "logical":
        return _base_letters(line)
    return _base_letters(get_display(line, base_dir="R"))


def joining_order(text: str) -> str:
    """Whether `text` is in "visual", "logical" or "unknown", from the shapes of adjacent presentation forms."""
    visual = logical = 0
    for left, right in itertools.pairwise(text):
        pair = (_form(left), _form(right))
        if pair in (("initial", "medial"), ("initial", "final"), ("medial", "final")):
            logical += 1
        elif pair in (("final", "medial"), ("final", "initial"), ("medial", "initial")):
            visual += 1
    if visual == logical:
        return "unknown"
    return "visual" if visual > logical else "logical"


def _form(char: str) -> str:
    decomposition = unicodedata.decomposition(char)
    return decomposition[1:].split(">", 1)[0] if decomposition.startswith("<") else ""


def _base_letters(text: str) -> str:
    # Presentation forms are one letter's shapes (compatibility characters): search and the
    # reader need the letter, so they are folded to it as NFKC does.
    return PRESENTATION_FORMS.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
