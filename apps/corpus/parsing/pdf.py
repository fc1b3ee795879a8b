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
from .pdf_structure import OutlineEntry, heading_key, outline_by_page, pdf_outline, pdf_title
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
            text = page.extract_text() or ""
            if not _has_text(text):
                marks = [(e.level, e.title) for e in bookmarks.get(number, [])]
                scans.read_pdf_page(number, collector, marks)
            else:
                segments = layout.segments(number, stream_text=text) or [PageSegment(text=text)]
                _add_segments(collector, segments, number, bookmarks.get(number, []))
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
    A bookmark goes to the prose that opens with its title, else to the top of the page."""
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
    """The first piece of the page with a paragraph opening with the bookmark's title."""
    for index, paragraphs in enumerate(blocks):
        if any(_opens(paragraph, entry) is not None for paragraph, _ in paragraphs):
            return index
    return None


def _add_page(
    collector: BlockCollector,
    paragraphs: list[tuple[str, bool]],
    number: int,
    bookmarks: list[OutlineEntry],
) -> None:
    """One page's paragraphs; a bookmark on the page starts its heading at the paragraph that
    opens with its title (the title itself is no block), or at the top of the page."""
    pending = [e for e in bookmarks if any(_opens(p, e) is not None for p, _ in paragraphs)]
    for entry in bookmarks:
        if entry not in pending:
            collector.heading(entry.level, entry.title)
    for paragraph, code in paragraphs:
        rest = _opens(paragraph, pending[0]) if pending else None
        if rest is not None:
            entry = pending.pop(0)
            collector.heading(entry.level, entry.title)
            paragraph = rest
        collector.add_paragraph(paragraph, code=code, page=number)


def _opens(paragraph: str, entry: OutlineEntry) -> str | None:
    """The paragraph after the bookmark's title when it opens with it, else None."""
    title, key = heading_key(entry.title), heading_key(paragraph)
    if not key.startswith(title) or key[len(title) : len(title) + 1].isalnum():
        return None
    words = len(entry.title.split())
    return " ".join(paragraph.split()[words:])


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
