"""Turn the bytes of a text upload (.txt, .md, .html) into `str`.

UTF-8 only, on purpose: guessing legacy encodings silently produces mojibake
that then gets indexed and cited. A clear error lets the uploader fix it.
"""

from __future__ import annotations

import codecs

from .types import CorruptDocument

UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode_text(data: bytes) -> str:
    body = data.removeprefix(codecs.BOM_UTF8)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if data.startswith(UTF16_BOMS):
            return _decode_utf16(data)
        bom_length = len(data) - len(body)
        raise CorruptDocument(_utf8_error_message(exc, offset=bom_length)) from exc


def _decode_utf16(data: bytes) -> str:
    try:
        # The "utf-16" codec reads the BOM to pick the byte order, then drops it.
        return data.decode("utf-16")
    except UnicodeDecodeError as exc:
        raise CorruptDocument(
            "The file starts like UTF-16 text but is damaged; save it as UTF-8 and upload it again"
        ) from exc


def _utf8_error_message(exc: UnicodeDecodeError, *, offset: int) -> str:
    byte = exc.object[exc.start]
    position = exc.start + offset  # counted in the uploaded file, BOM included
    return (
        f"The file is not valid UTF-8 text (invalid byte 0x{byte:02x} at position {position}); "
        "save it as UTF-8 and upload it again"
    )
