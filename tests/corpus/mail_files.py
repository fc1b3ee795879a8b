"""E-mail made with the standard library's email package, as a mail client writes it."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime


def eml_bytes(
    subject: str, body: str, *, attachments: Sequence[tuple[str, bytes]] = (), html: bool = False
) -> bytes:
    message = EmailMessage()
    message["From"] = "Sara Ahmadi <sara@example.org>"
    message["To"] = "staff@example.org"
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime(2026, 11, 30, 9, 15, tzinfo=UTC))
    message.set_content(body)
    if html:
        message.add_alternative(f"<html><body><p>{body}</p></body></html>", subtype="html")
    for filename, data in attachments:
        message.add_attachment(
            data, maintype="application", subtype="octet-stream", filename=filename
        )
    return bytes(message)


def broken_message() -> bytes:
    """A message whose text part names a character set no one knows: it cannot be decoded."""
    return (
        b"From: someone@example.org\nSubject: Broken\n"
        b'Content-Type: text/plain; charset="x-no-such-charset"\n\nunreadable body\n'
    )


def mbox_bytes(messages: Sequence[bytes]) -> bytes:
    """An mbox as mail clients keep one: each message after its "From " line."""
    parts = []
    for message in messages:
        escaped = message.replace(b"\nFrom ", b"\n>From ")
        parts.append(b"From sender@example.org Mon Nov 30 09:15:00 2026\n" + escaped.rstrip(b"\n"))
    return b"\n\n".join(parts) + b"\n"


def zip_bomb(*, name: str, inflated_bytes: int) -> bytes:
    """A small zip whose one member inflates to `inflated_bytes` of zeros."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, b"\0" * inflated_bytes)
    return buffer.getvalue()
