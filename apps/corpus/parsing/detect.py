"""Decide what a file is from its name, then check the bytes agree.

The extension states intent; the magic bytes catch files that were renamed
or damaged, so a parser never sees data of the wrong kind.
"""

from __future__ import annotations

import io
import zipfile

from .types import (
    DOCX,
    JPEG,
    MIME_TYPE_BY_SUFFIX,
    PDF,
    PNG,
    PPTX,
    SUPPORTED_SUFFIXES,
    TIFF,
    XLSX,
    CorruptDocument,
    EmptyDocument,
    EncryptedDocument,
    UnsupportedFileType,
)

PDF_MAGIC = b"%PDF-"
# Readers accept the header anywhere in the first KiB (some generators prepend junk).
PDF_HEADER_WINDOW = 1024
IMAGE_MAGIC: dict[str, tuple[bytes, ...]] = {
    PNG: (b"\x89PNG\r\n\x1a\n",),
    JPEG: (b"\xff\xd8\xff",),
    TIFF: (b"II*\x00", b"MM\x00*"),
}
# An Office Open XML package names its kind by the part it must hold.
PACKAGE_MEMBERS: dict[str, tuple[str, str]] = {
    PPTX: ("ppt/presentation.xml", "PowerPoint presentation"),
    XLSX: ("xl/workbook.xml", "Excel workbook"),
}
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy Word 97-2003 .doc
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
BINARY_SAMPLE_BYTES = 8 * 1024
MAX_CONTROL_SHARE = 0.10
# Control bytes that ordinary text does contain: tab, LF, FF, CR.
TEXT_CONTROL_BYTES = frozenset({0x09, 0x0A, 0x0C, 0x0D})


def base_name(filename: str) -> str:
    # Browsers on Windows may send the full client path.
    return filename.replace("\\", "/").rsplit("/", 1)[-1].strip()


def filename_stem(filename: str) -> str:
    name = base_name(filename)
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return stem.strip() or name


def file_extension(filename: str) -> str:
    name = base_name(filename)
    if "." not in name[1:]:
        return ""
    return "." + name.rsplit(".", 1)[1].lower()


def detect_mime_type(*, filename: str, data: bytes) -> str:
    mime_type = _mime_from_extension(filename)
    if not data.strip():
        raise EmptyDocument("The file is empty")
    if mime_type == PDF:
        _check_pdf(data)
    elif mime_type == DOCX:
        _check_docx(data)
    elif mime_type in PACKAGE_MEMBERS:
        _check_package(data, mime_type)
    elif mime_type in IMAGE_MAGIC:
        _check_image(data, mime_type)
    else:
        _check_text(data)
    return mime_type


def _mime_from_extension(filename: str) -> str:
    extension = file_extension(filename)
    mime_type = MIME_TYPE_BY_SUFFIX.get(extension)
    if mime_type is not None:
        return mime_type
    supported = supported_suffixes_text()
    if not extension:
        raise UnsupportedFileType(
            f'"{base_name(filename)}" has no file extension; supported types are {supported}'
        )
    raise UnsupportedFileType(
        f'Files of type "{extension}" are not supported; supported types are {supported}'
    )


def supported_suffixes_text() -> str:
    """The accepted endings for a message to a person: ".docx, .htm, .html, ..."."""
    return ", ".join(sorted(SUPPORTED_SUFFIXES))


def _check_pdf(data: bytes) -> None:
    if PDF_MAGIC not in data[:PDF_HEADER_WINDOW]:
        raise CorruptDocument(
            "The file is named .pdf but is not a PDF (it has no PDF header); "
            "export it as PDF again and upload it"
        )


def _check_image(data: bytes, mime_type: str) -> None:
    if not data.startswith(IMAGE_MAGIC[mime_type]):
        kind = mime_type.split("/")[1].upper()
        raise CorruptDocument(f"The file is not a {kind} image (its first bytes say otherwise)")


def _check_package(data: bytes, mime_type: str) -> None:
    member, kind = PACKAGE_MEMBERS[mime_type]
    if data.startswith(OLE_MAGIC):
        # Office wraps a password-protected package in an OLE file, as it does old .ppt/.xls.
        raise EncryptedDocument(
            f"The {kind} is password-protected or in the old 97-2003 format; remove the "
            "password or save it in the current format, and upload it again"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocument(f"The file is not {_article(kind)}, or it is damaged") from exc
    if member not in names:
        raise CorruptDocument(
            f"The file is a zip archive but not {_article(kind)} ({member} is missing)"
        )


def _article(kind: str) -> str:
    return f"{'an' if kind[0] in 'AEIOU' else 'a'} {kind}"


def _check_docx(data: bytes) -> None:
    if data.startswith(OLE_MAGIC):
        raise CorruptDocument(
            "The file is an old Word 97-2003 document (.doc) named .docx; "
            "save it as .docx in Word and upload it again"
        )
    buffer = io.BytesIO(data)
    if not zipfile.is_zipfile(buffer):
        raise CorruptDocument("The file is named .docx but is not a Word document")
    try:
        with zipfile.ZipFile(buffer) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocument("The Word document is damaged and could not be opened") from exc
    if "word/document.xml" not in names:
        raise CorruptDocument(
            "The file is a zip archive but not a Word document (word/document.xml is missing)"
        )


def _check_text(data: bytes) -> None:
    if data.startswith(UTF16_BOMS):
        return  # UTF-16 text is full of NUL bytes by design.
    if looks_binary(data[:BINARY_SAMPLE_BYTES]):
        raise CorruptDocument("The file looks like binary data, not text")


def looks_binary(sample: bytes) -> bool:
    if not sample or b"\x00" in sample:
        return bool(sample)
    controls = sum(1 for byte in sample if _is_control(byte))
    return controls / len(sample) > MAX_CONTROL_SHARE


def _is_control(byte: int) -> bool:
    return (byte < 0x20 and byte not in TEXT_CONTROL_BYTES) or byte == 0x7F
