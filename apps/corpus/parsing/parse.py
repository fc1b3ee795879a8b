"""Entry point: detect the type, run the matching parser, apply fallbacks."""

from __future__ import annotations

from collections.abc import Callable

from .detect import detect_mime_type, filename_stem
from .docx import parse_docx
from .html import parse_html
from .images import parse_image
from .mail import parse_eml, parse_mbox
from .markdown import parse_markdown
from .ocr import OcrOptions
from .office import parse_pptx
from .pdf import PageProgress, parse_pdf
from .sheets import parse_csv, parse_xlsx
from .text import parse_text
from .types import (
    CSV,
    DOCX,
    EML,
    HTML,
    IMAGE_TYPES,
    MARKDOWN,
    MBOX,
    PDF,
    PLAIN_TEXT,
    PPTX,
    XLSX,
    EmptyDocument,
    Extracted,
    ParsedDocument,
)

Parser = Callable[[bytes], Extracted]
# Parsers of files that may hold pages without a text layer: they take the OCR options.
ScanParser = Callable[..., Extracted]

PARSERS: dict[str, Parser] = {
    DOCX: parse_docx,
    HTML: parse_html,
    MARKDOWN: parse_markdown,
    PLAIN_TEXT: parse_text,
    PPTX: parse_pptx,
    XLSX: parse_xlsx,
    CSV: parse_csv,
    EML: parse_eml,
    MBOX: parse_mbox,
}
SCAN_PARSERS: dict[str, ScanParser] = {PDF: parse_pdf} | dict.fromkeys(IMAGE_TYPES, parse_image)
EMPTY_MESSAGES: dict[str, str] = {
    PDF: "No text could be extracted from this PDF; it may be a scanned image",
    DOCX: "The Word document contains no text",
    HTML: "The web page contains no readable text",
    MARKDOWN: "The file is empty",
    PLAIN_TEXT: "The file is empty",
    PPTX: "The presentation contains no text",
    XLSX: "The spreadsheet contains no values",
    CSV: "The file is empty",
    EML: "The e-mail message has no text",
    MBOX: "No message in the mailbox has text",
}
IMAGE_EMPTY = "No text could be read in the image"


def parse_document(
    *,
    filename: str,
    data: bytes,
    ocr: OcrOptions | None = None,
    pdf_table_pages: int = 0,
    on_page: PageProgress | None = None,
) -> ParsedDocument:
    """The document's blocks. Pages without a text layer are read by OCR only with `ocr`:
    task workers pass it, requests never do (OCR takes seconds a page). The first
    `pdf_table_pages` pages of a PDF are searched for tables (slower than its plain text);
    `on_page` hears of each PDF page read."""
    mime_type = detect_mime_type(filename=filename, data=data)
    if mime_type == PDF:
        extracted = parse_pdf(data, ocr=ocr, table_pages=pdf_table_pages, on_page=on_page)
    elif mime_type in SCAN_PARSERS:
        extracted = SCAN_PARSERS[mime_type](data, ocr=ocr)
    else:
        extracted = PARSERS[mime_type](data)
    if not extracted.blocks:
        raise EmptyDocument(_empty_message(mime_type, extracted))
    return ParsedDocument(
        title=extracted.title or filename_stem(filename),
        mime_type=mime_type,
        blocks=extracted.blocks,
        unread_pages=extracted.unread_pages,
        attachments=extracted.attachments,
    )


def _empty_message(mime_type: str, extracted: Extracted) -> str:
    message = EMPTY_MESSAGES.get(mime_type, IMAGE_EMPTY)
    if extracted.unread_pages:
        first = extracted.unread_pages[0]
        message += f" (page {first.page}: {first.reason})"
    return message
