"""Value types and errors shared by every parser.

Nothing here knows about Django: the ingestion service turns a
`DocumentError` into a user-facing message or an HTTP status.
"""

from __future__ import annotations

from dataclasses import dataclass

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
MARKDOWN = "text/markdown"
PLAIN_TEXT = "text/plain"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV = "text/csv"
EML, MBOX = "message/rfc822", "application/mbox"
PNG, JPEG, TIFF = "image/png", "image/jpeg", "image/tiff"
IMAGE_TYPES = frozenset({PNG, JPEG, TIFF})
# A chunk's text is its blocks joined by this; reading a chunk back splits on it.
BLOCK_SEPARATOR = "\n\n"

# The one list of accepted files: detection, folder ingestion, the upload form and the docs'
# tests all read it. A file's ending states what it claims to be; detection checks the bytes.
MIME_TYPE_BY_SUFFIX: dict[str, str] = {
    ".pdf": PDF,
    ".docx": DOCX,
    ".html": HTML,
    ".htm": HTML,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".txt": PLAIN_TEXT,
    ".text": PLAIN_TEXT,
    ".pptx": PPTX,
    ".xlsx": XLSX,
    ".csv": CSV,
    ".eml": EML,
    ".mbox": MBOX,
    ".png": PNG,
    ".jpg": JPEG,
    ".jpeg": JPEG,
    ".tif": TIFF,
    ".tiff": TIFF,
}
SUPPORTED_SUFFIXES: frozenset[str] = frozenset(MIME_TYPE_BY_SUFFIX)
SUPPORTED_MIME_TYPES: frozenset[str] = frozenset(MIME_TYPE_BY_SUFFIX.values())


# What a block is, so that chunks can keep lists, steps and tables readable.
TEXT, ITEM, STEP, ROW, HEAD_ROW, CODE = "text", "item", "step", "row", "head_row", "code"


@dataclass(frozen=True)
class Block:
    """One paragraph, list item or table row, with where it sits in the document."""

    text: str
    page: int | None
    heading: str | None
    kind: str = TEXT  # TEXT, ITEM (bulleted), STEP (numbered), ROW, HEAD_ROW (table), CODE
    ocr_confidence: float | None = None  # 0..100 when the page was read by OCR


@dataclass(frozen=True)
class UnreadPage:
    """A page left out of the document, with the reason, so the rest can still be kept."""

    page: int
    reason: str


@dataclass(frozen=True)
class Attachment:
    """A file carried inside a document (an e-mail's attachment): a document of its own."""

    filename: str
    data: bytes


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    mime_type: str
    blocks: tuple[Block, ...]
    unread_pages: tuple[UnreadPage, ...] = ()
    attachments: tuple[Attachment, ...] = ()


@dataclass(frozen=True)
class Extracted:
    """What a single-format parser returns; the dispatcher adds the fallbacks."""

    title: str | None
    blocks: tuple[Block, ...]
    unread_pages: tuple[UnreadPage, ...] = ()
    attachments: tuple[Attachment, ...] = ()


class DocumentError(Exception):
    """Base class; `str(exc)` is written for the person who uploaded the file."""


class UnsupportedFileType(DocumentError):
    pass


class EmptyDocument(DocumentError):
    pass


class CorruptDocument(DocumentError):
    pass


class EncryptedDocument(DocumentError):
    pass


class DocumentTooLarge(DocumentError):
    pass
