"""E-mail: one message (.eml) or a mailbox (.mbox), with the standard library's email package.

A message's subject is its title (in a mailbox, each message is a section under its subject,
numbered as a page); the sender and date open its text, then its text part (plain text, or
the HTML part read as a web page). Attachments are not read into the message: they are
handed back as files of their own, which ingestion submits as documents of their own. A
message in a mailbox that cannot be read is recorded and the others kept.
"""

from __future__ import annotations

import email
import email.policy
import mailbox
import tempfile
from dataclasses import replace
from email.message import EmailMessage
from pathlib import Path

from .blocks import HEADING_SEPARATOR, collapse_whitespace
from .html import parse_html
from .text import parse_text
from .types import (
    Attachment,
    Block,
    CorruptDocument,
    DocumentTooLarge,
    Extracted,
    UnreadPage,
)

# Read at call time so deployments and tests can change them.
MAX_MESSAGES = 5000
MAX_ATTACHMENTS = 50
HEADER_NAMES = ("from", "to", "subject", "date", "message-id")


def parse_eml(data: bytes) -> Extracted:
    message = _message(data)
    if not any(message.get(name) for name in HEADER_NAMES):
        raise CorruptDocument("The file is named .eml but holds no e-mail headers")
    blocks, attachments = _message_blocks(message, page=None, heading=None)
    return Extracted(title=_subject(message), blocks=blocks, attachments=attachments)


def parse_mbox(data: bytes) -> Extracted:
    if not data.lstrip().startswith(b"From "):
        raise CorruptDocument('The file is named .mbox but does not start with a "From " line')
    blocks: list[Block] = []
    attachments: list[Attachment] = []
    unread: list[UnreadPage] = []
    for number, raw in enumerate(_raw_messages(data), start=1):
        if number > MAX_MESSAGES:
            raise DocumentTooLarge(f"The mailbox has more than {MAX_MESSAGES} messages")
        try:
            message = _message(raw)
            subject = _subject(message) or f"Message {number}"
            found, files = _message_blocks(message, page=number, heading=subject)
        except Exception as exc:  # One damaged message costs itself, never the mailbox.
            unread.append(
                UnreadPage(number, f"the message could not be read ({type(exc).__name__})")
            )
            continue
        if not found:
            unread.append(UnreadPage(number, "the message has no text"))
        blocks.extend(found)
        attachments.extend(files)
    return Extracted(
        title=None, blocks=tuple(blocks), unread_pages=tuple(unread), attachments=tuple(attachments)
    )


def _raw_messages(data: bytes) -> list[bytes]:
    # mailbox reads files only; the copy lives as long as the parse.
    with tempfile.TemporaryDirectory(prefix="mbox-") as folder:
        path = Path(folder) / "mailbox.mbox"
        path.write_bytes(data)
        box = mailbox.mbox(path, create=False)
        try:
            return [box.get_bytes(key) for key in box.iterkeys()]
        finally:
            box.close()


def _message(data: bytes) -> EmailMessage:
    parsed = email.message_from_bytes(data, policy=email.policy.default)
    if not isinstance(parsed, EmailMessage):  # the default policy always makes one
        raise CorruptDocument("The e-mail message could not be read")
    return parsed


def _subject(message: EmailMessage) -> str | None:
    return collapse_whitespace(str(message.get("subject", ""))) or None


def _message_blocks(
    message: EmailMessage, *, page: int | None, heading: str | None
) -> tuple[tuple[Block, ...], tuple[Attachment, ...]]:
    lead = " · ".join(
        f"{label}: {collapse_whitespace(str(message[name]))}"
        for label, name in (("From", "from"), ("Date", "date"))
        if message.get(name)
    )
    blocks = [Block(text=lead, page=page, heading=heading)] if lead else []
    blocks.extend(replace(b, page=page, heading=_under(heading, b.heading)) for b in _body(message))
    return tuple(blocks), _attachments(message)


def _under(parent: str | None, heading: str | None) -> str | None:
    if parent and heading:
        return f"{parent}{HEADING_SEPARATOR}{heading}"
    return parent or heading


def _body(message: EmailMessage) -> tuple[Block, ...]:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ()
    content = part.get_content()
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    if not data.strip():
        return ()
    parser = parse_html if part.get_content_subtype() == "html" else parse_text
    return parser(data).blocks


def _attachments(message: EmailMessage) -> tuple[Attachment, ...]:
    found: list[Attachment] = []
    for part in message.iter_attachments():
        filename = part.get_filename()
        payload = part.get_payload(decode=True)
        if not filename or not isinstance(payload, bytes):
            continue  # An inline picture or a part without a name is no document.
        if len(found) == MAX_ATTACHMENTS:
            break
        found.append(Attachment(filename=collapse_whitespace(filename), data=payload))
    return tuple(found)
