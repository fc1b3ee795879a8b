"""PDF via pypdf: one block per paragraph per page, pages numbered from 1.

A page's text layer is cut into paragraphs and command lines by `paragraphs.page_blocks`, the
joiner a page read by OCR goes through too; a page without a text layer is read by OCR.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from pypdf import PasswordType, PdfReader

from .blocks import BlockCollector, collapse_whitespace
from .ocr import OcrOptions
from .paragraphs import page_blocks
from .pdf_layout import CELL_SEPARATOR, PageSegment, PdfLayout
from .pdf_structure import (
    OutlineEntry,
    heading_key,
    outline_by_page,
    pdf_outline,
    pdf_title,
    sized_bookmarks,
    sized_text,
)
from .scans import PdfScans
from .types import (
    HEAD_ROW,
    ROW,
    CorruptDocument,
    DocumentError,
    DocumentTooLarge,
    EncryptedDocument,
    Extracted,
)

# Read at call time so deployments and tests can change it.
MAX_PDF_PAGES = 2000
# A page with fewer letters than this in its text layer is taken as a scan.
MIN_TEXT_LETTERS = 3
MAX_REASON_CHARS = 120


# Told (pages done, pages in all) after every page, so a long scan shows its progress.
PageProgress = Callable[[int, int], None]


def parse_pdf(
    data: bytes,
    *,
    ocr: OcrOptions | None = None,
    table_pages: int = 0,
    on_page: PageProgress | None = None,
) -> Extracted:
    """The PDF's paragraphs; with `ocr`, pages without a text layer are read by Tesseract; the
    first `table_pages` pages are searched for tables, kept as rows with their header."""
    try:
        return _extract(data, ocr=ocr, table_pages=table_pages, on_page=on_page)
    except DocumentError:
        raise
    except Exception as exc:
        # pypdf raises its own errors but also ValueError, KeyError, ... on damaged files.
        raise CorruptDocument(_corrupt_message(exc)) from exc


def _extract(
    data: bytes, *, ocr: OcrOptions | None, table_pages: int, on_page: PageProgress | None
) -> Extracted:
    reader = PdfReader(io.BytesIO(data))
    _unlock(reader)
    _check_page_count(len(reader.pages))
    outline = pdf_outline(reader)
    bookmarks = outline_by_page(outline)
    collector = BlockCollector()
    scans = PdfScans(data=data, options=ocr)
    layout = PdfLayout(data=data, table_pages=table_pages)
    try:
        for number, page in enumerate(reader.pages, start=1):
            if outline:
                text, marks = page.extract_text() or "", bookmarks.get(number, [])
            else:
                text, runs = sized_text(page)
                marks = sized_bookmarks(runs, page=number)
            if not _has_text(text):
                scans.read_pdf_page(number, collector, [(e.level, e.title) for e in marks])
            else:
                segments = layout.segments(number, stream_text=text) or [PageSegment(text=text)]
                _add_segments(collector, segments, number, marks)
            if on_page is not None:
                on_page(number, len(reader.pages))
    finally:
        scans.close()
        layout.close()
    title = pdf_title(reader, outline)
    return Extracted(title=title, blocks=collector.blocks, unread_pages=scans.unread)


def _has_text(text: str) -> bool:
    return sum(ch.isalpha() for ch in text) >= MIN_TEXT_LETTERS


def _add_segments(
    collector: BlockCollector,
    segments: list[PageSegment],
    number: int,
    bookmarks: list[OutlineEntry],
) -> None:
    """A page's prose and tables in reading position; a table's first row is its header.
    A bookmark goes to the prose that prints its title, else to the top of the page."""
    blocks = [page_blocks(segment.text) for segment in segments]
    home = {entry: _home(entry, blocks) for entry in bookmarks}
    for index, segment in enumerate(segments):
        marks = [e for e in bookmarks if home[e] == index or (home[e] is None and index == 0)]
        if not segment.rows:
            _add_page(collector, blocks[index], number, marks)
            continue
        for entry in marks:
            collector.heading(entry.level, entry.title)
        for row_number, row in enumerate(segment.rows):
            kind = HEAD_ROW if row_number == 0 else ROW
            collector.add(CELL_SEPARATOR.join(row), page=number, kind=kind)


def _home(entry: OutlineEntry, blocks: list[list[tuple[str, bool]]]) -> int | None:
    """The last piece of the page whose prose prints the bookmark's title."""
    found = [i for i, paragraphs in enumerate(blocks) if _printed_at(paragraphs, entry)]
    return found[-1] if found else None


def _add_page(
    collector: BlockCollector,
    paragraphs: list[tuple[str, bool]],
    number: int,
    bookmarks: list[OutlineEntry],
) -> None:
    """One page's paragraphs; a bookmark on the page starts its heading where its title is
    printed (the title itself is no block, and the prose before it on its line is a block of
    its own), or at the top of the page."""
    cuts: dict[int, list[tuple[int, OutlineEntry]]] = {}
    for entry in bookmarks:
        spot = _printed_at(paragraphs, entry)
        if spot is None:
            collector.heading(entry.level, entry.title)
        else:
            cuts.setdefault(spot[0], []).append((spot[1], entry))
    for index, (paragraph, code) in enumerate(paragraphs):
        if index not in cuts:
            collector.add_paragraph(paragraph, code=code, page=number)
            continue
        words, start = paragraph.split(), 0
        for at, entry in sorted(cuts[index], key=lambda cut: cut[0]):
            if at < start:  # two titles printed over each other's words
                continue
            if at > start:
                collector.add(" ".join(words[start:at]), page=number)
            collector.heading(entry.level, entry.title)
            start = at + len(entry.title.split())
        collector.add(" ".join(words[start:]), page=number)


def _printed_at(paragraphs: list[tuple[str, bool]], entry: OutlineEntry) -> tuple[int, int] | None:
    """(paragraph, word) where the page's prose prints the bookmark's title: the last paragraph
    opening with it (case and spacing aside), else the last place inside a paragraph that
    prints it with its own capitals (a chapter's first page lists its sections before their
    headings; prose may name a section in lower case)."""
    title = entry.title.split()
    keys = [heading_key(word) for word in title]
    opening = inside = None
    for index, (paragraph, code) in enumerate(paragraphs):
        words = [] if code else paragraph.split()
        if [heading_key(word) for word in words[: len(title)]] == keys:
            opening = (index, 0)
        for at in range(1, len(words) - len(title) + 1):
            if words[at : at + len(title)] == title:
                inside = (index, at)
    return (opening or inside) if title else None


def _unlock(reader: PdfReader) -> None:
    # Many PDFs are "encrypted" only to set permissions and open with an empty password.
    if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise EncryptedDocument(
            "The PDF is password-protected; remove the password and upload it again"
        )


def _check_page_count(pages: int) -> None:
    if pages > MAX_PDF_PAGES:
        raise DocumentTooLarge(
            f"The PDF has {pages} pages; the limit is {MAX_PDF_PAGES}. "
            "Split it and upload the parts"
        )


def _corrupt_message(exc: Exception) -> str:
    reason = collapse_whitespace(str(exc))[:MAX_REASON_CHARS] or type(exc).__name__
    return f"The PDF is damaged or incomplete and could not be read ({reason})"
