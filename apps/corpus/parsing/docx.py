"""Word (.docx) via python-docx: paragraphs and table rows in document order.

Paragraphs styled "Title" or "Heading 1".."Heading 6" update the heading path
and are not blocks themselves.
"""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.document import Document
from docx.table import Table, _Row
from docx.text.paragraph import Paragraph

from .blocks import BlockCollector, collapse_whitespace
from .types import HEAD_ROW, ROW, CorruptDocument, DocumentTooLarge, Extracted

# A .docx is a zip; refuse archives that would inflate past this (zip bombs).
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
HEADING_STYLE = re.compile(r"heading ([1-6])", re.IGNORECASE)
TITLE_LEVEL = 0
CELL_SEPARATOR = " | "


def parse_docx(data: bytes) -> Extracted:
    document = _open(data)
    collector = BlockCollector()
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            _add_table(item, collector)
        else:
            _add_paragraph(item, collector)
    return Extracted(title=_title(document, collector), blocks=collector.blocks)


def _open(data: bytes) -> Document:
    _check_size(data)
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as exc:
        # python-docx surfaces damage as KeyError, lxml errors, BadZipFile, ...;
        # to the uploader they all mean the same thing.
        raise CorruptDocument("The Word document is damaged and could not be read") from exc


def _check_size(data: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocument("The Word document is damaged and could not be read") from exc
    if total > MAX_UNCOMPRESSED_BYTES:
        raise DocumentTooLarge("The Word document is too large to process once unpacked")


def heading_level(paragraph: Paragraph) -> int | None:
    name = paragraph.style.name if paragraph.style is not None else None
    if not name:
        return None
    if name.lower() == "title":
        return TITLE_LEVEL
    match = HEADING_STYLE.fullmatch(name)
    return int(match[1]) if match else None


def _add_paragraph(paragraph: Paragraph, collector: BlockCollector) -> None:
    level = heading_level(paragraph)
    if level is None:
        collector.add(paragraph.text)
    else:
        collector.heading(level, paragraph.text)


def _add_table(table: Table, collector: BlockCollector) -> None:
    # Word marks no header reliably (the "repeat as header row" flag is a print setting), so
    # the first row is the head, as in a slide's table: chunking keeps it above every row.
    for i, row in enumerate(table.rows):
        collector.add(_row_text(row), kind=HEAD_ROW if i == 0 else ROW)


def _row_text(row: _Row) -> str:
    texts: list[str] = []
    seen: list[object] = []
    for cell in row.cells:
        # A merged cell appears once per grid column it spans; keep it once.
        if cell._tc in seen:
            continue
        seen.append(cell._tc)
        text = collapse_whitespace(cell.text)
        if text:
            texts.append(text)
    return CELL_SEPARATOR.join(texts)


def _title(document: Document, collector: BlockCollector) -> str | None:
    # The visible Title paragraph beats metadata, which templates often leave stale.
    metadata_title = collapse_whitespace(document.core_properties.title or "")
    return collector.first_heading(level=TITLE_LEVEL) or metadata_title or collector.first_heading()
