"""Entry point: detect the type, run the matching parser, apply fallbacks."""

from __future__ import annotations

from collections.abc import Callable

from .detect import detect_mime_type, filename_stem
from .docx import parse_docx
from .html import parse_html
from .markdown import parse_markdown
from .pdf import parse_pdf
from .text import parse_text
from .types import DOCX, HTML, MARKDOWN, PDF, PLAIN_TEXT, EmptyDocument, Extracted, ParsedDocument

Parser = Callable[[bytes], Extracted]

PARSERS: dict[str, Parser] = {
    PDF: parse_pdf,
    DOCX: parse_docx,
    HTML: parse_html,
    MARKDOWN: parse_markdown,
    PLAIN_TEXT: parse_text,
}
EMPTY_MESSAGES: dict[str, str] = {
    PDF: "No text could be extracted from this PDF; it may be a scanned image",
    DOCX: "The Word document contains no text",
    HTML: "The web page contains no readable text",
    MARKDOWN: "The file is empty",
    PLAIN_TEXT: "The file is empty",
}


def parse_document(*, filename: str, data: bytes) -> ParsedDocument:
    mime_type = detect_mime_type(filename=filename, data=data)
    extracted = PARSERS[mime_type](data)
    if not extracted.blocks:
        raise EmptyDocument(EMPTY_MESSAGES[mime_type])
    return ParsedDocument(
        title=extracted.title or filename_stem(filename),
        mime_type=mime_type,
        blocks=extracted.blocks,
    )
