"""A PDF's own structure: its title and its outline (bookmarks) as headings; without an
outline, the lines printed larger than the body (printed_headings) stand for its bookmarks.

The title comes from the metadata when it reads as a title, else from the first outline
entry, else from the largest text on the first page; never from binary or body text, so a
source is not shown by a chunk's first words or a hex dump.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pypdf import PageObject, PdfReader

from .blocks import collapse_whitespace
from .printed_headings import sized_headings

# Generators such as ReportLab write "untitled" when no title was given.
PLACEHOLDER_TITLES = frozenset({"untitled", "untitled document", "document", "microsoft word"})
# A title is mostly letters; a hex dump or a path is not.
MIN_LETTER_SHARE = 0.5
MAX_TITLE_CHARS = 200
# The first page's largest text is its title only when it stands above the body text.
MIN_TITLE_SCALE = 1.15
MAX_OUTLINE_ENTRIES = 2000


@dataclass(frozen=True)
class OutlineEntry:
    level: int  # 1 for a top-level bookmark
    title: str
    page: int  # from 1


def clean_title(raw: object) -> str | None:
    """`raw` as a title, or None when it is a placeholder, binary or not text at all."""
    title = collapse_whitespace(str(raw or ""))[:MAX_TITLE_CHARS].strip()
    if not title or title.lower() in PLACEHOLDER_TITLES:
        return None
    if any(unicodedata.category(ch) in ("Cc", "Co", "Cs") or ch == "\ufffd" for ch in title):
        return None
    visible = [ch for ch in title if not ch.isspace()]
    letters = sum(ch.isalpha() for ch in visible)
    return title if letters >= MIN_LETTER_SHARE * len(visible) else None


def pdf_title(reader: PdfReader, outline: Sequence[OutlineEntry]) -> str | None:
    try:
        metadata = reader.metadata.title if reader.metadata is not None else None
    except Exception:
        metadata = None  # A damaged info dictionary should not cost us the text.
    if title := clean_title(metadata):
        return title
    if outline and (title := clean_title(outline[0].title)):
        return title
    return _largest_first_page_text(reader)


def pdf_outline(reader: PdfReader) -> list[OutlineEntry]:
    """The bookmarks in document order; entries that name no page are left out."""
    try:
        return list(_walk(reader, reader.outline, level=1))[:MAX_OUTLINE_ENTRIES]
    except Exception:
        return []  # A damaged outline costs the headings, never the text.


def _walk(reader: PdfReader, items: Sequence[Any], *, level: int) -> Iterator[OutlineEntry]:
    for item in items:
        if isinstance(item, list):
            yield from _walk(reader, item, level=level + 1)
            continue
        page = reader.get_destination_page_number(item)
        title = clean_title(getattr(item, "title", ""))
        if page is not None and page >= 0 and title:
            yield OutlineEntry(level=level, title=title, page=page + 1)


def _largest_first_page_text(reader: PdfReader) -> str | None:
    if not reader.pages:
        return None
    try:
        _, runs = sized_text(reader.pages[0])
    except Exception:
        return None
    return _title_from_sizes(runs)


def sized_text(page: PageObject) -> tuple[str, list[tuple[float, str]]]:
    """The page's text, and its runs of text with the size each is printed in."""
    runs: list[tuple[float, str]] = []

    def visit(text: str, cm: Any, tm: Any, font: Any, size: float) -> None:
        scale = abs(float(tm[3]) or 1.0) * abs(float(cm[3]) or 1.0)
        if text.strip():
            runs.append((round(float(size or 0) * scale, 1), text))

    return page.extract_text(visitor_text=visit) or "", runs


def sized_bookmarks(runs: Sequence[tuple[float, str]], *, page: int) -> list[OutlineEntry]:
    """A page's headings told by their size, as its bookmarks: for a PDF without an outline."""
    return [OutlineEntry(h.level, h.title, page) for h in sized_headings(runs)]


def _title_from_sizes(pieces: Sequence[tuple[float, str]]) -> str | None:
    by_size: Counter[float] = Counter()
    for size, text in pieces:
        by_size[size] += len(text.strip())
    if len(by_size) < 2:
        return None  # One size throughout: no line stands out as the title.
    body = by_size.most_common(1)[0][0]
    largest = max(by_size)
    if largest < MIN_TITLE_SCALE * body:
        return None
    return clean_title(" ".join(text for size, text in pieces if size == largest))


def outline_by_page(outline: Sequence[OutlineEntry]) -> dict[int, list[OutlineEntry]]:
    pages: dict[int, list[OutlineEntry]] = {}
    for entry in outline:
        pages.setdefault(entry.page, []).append(entry)
    return pages


def heading_key(text: str) -> str:
    """How a paragraph and a bookmark are compared: case and spacing ignored."""
    return collapse_whitespace(unicodedata.normalize("NFKC", text)).casefold()
