"""Document parsing: uploaded bytes in, titled blocks of plain text out.

Pure Python (no Django, no database). Unicode normalisation happens later,
in the normalisation step, so the text here is exactly what the file holds
apart from collapsed whitespace.
"""

from .detect import detect_mime_type, supported_suffixes_text
from .ocr import OcrOptions
from .parse import parse_document
from .types import (
    MIME_TYPE_BY_SUFFIX,
    SUPPORTED_MIME_TYPES,
    SUPPORTED_SUFFIXES,
    Attachment,
    Block,
    CorruptDocument,
    DocumentError,
    DocumentTooLarge,
    EmptyDocument,
    EncryptedDocument,
    ParsedDocument,
    UnreadPage,
    UnsupportedFileType,
)

__all__ = [
    "MIME_TYPE_BY_SUFFIX",
    "SUPPORTED_MIME_TYPES",
    "SUPPORTED_SUFFIXES",
    "Attachment",
    "Block",
    "CorruptDocument",
    "DocumentError",
    "DocumentTooLarge",
    "EmptyDocument",
    "EncryptedDocument",
    "OcrOptions",
    "ParsedDocument",
    "UnreadPage",
    "UnsupportedFileType",
    "detect_mime_type",
    "parse_document",
    "supported_suffixes_text",
]
