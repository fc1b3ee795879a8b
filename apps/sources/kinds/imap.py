"""An IMAP mailbox: each message a document (its subject the title, its sender and date kept),
each attachment a document of its own.

The location is `imaps://host[:port]/Folder` (TLS; `imap://` is plain, for a server on this
machine or a trusted network), INBOX when no folder is named. Messages are keyed by UID and
their marker is the folder's UIDVALIDITY: a sync asks for the folder's UIDs and fetches only
the new ones, in batches of RAG_SOURCE_IMAP_BATCH (their sizes first: one over the file limit is
never downloaded), never marking them read; a UID that is gone
was deleted, and its message and attachments leave the collection. If the server renumbers
the folder (a new UIDVALIDITY) every message is fetched again and matched by content, so
nothing is embedded twice. Credentials: `username`, `password`.

A message is stored as its headers and text only; its attachments are listed beside it
(`Folder/UID/name`), so deleting the message deletes them. The listing keeps the text of new
messages only: an attachment is read again by UID when the sync reaches it, so memory holds one
message, never the mailbox.
"""

from __future__ import annotations

import email
import email.policy
import imaplib
import socket
import ssl
from collections.abc import Iterator, Mapping
from email.message import EmailMessage
from urllib.parse import quote, unquote, urlsplit

from django.conf import settings
from imap_tools import BaseMailBox, MailBox, MailBoxUnencrypted
from imap_tools.errors import ImapToolsError, MailboxLoginError

from apps.corpus.parsing.mail import parse_eml
from apps.corpus.parsing.types import Attachment, DocumentError
from apps.sources.kinds.base import ItemError, Known, Limits, Listed, SourceError, supported

PORTS = {"imap": 143, "imaps": 993}
KEPT_HEADERS = ("From", "To", "Cc", "Subject", "Date", "Message-ID")
NETWORK_ERRORS = (OSError, ssl.SSLError, imaplib.IMAP4.error, socket.timeout)


class ImapConnector:
    def __init__(self, *, location: str, credentials: Mapping[str, str], limits: Limits) -> None:
        parts = urlsplit(location)
        if parts.scheme not in PORTS or not parts.hostname:
            raise SourceError("An IMAP location is imaps://host/Folder (or imap:// without TLS).")
        self.scheme, self.host = parts.scheme, parts.hostname
        try:
            self.port = parts.port or PORTS[parts.scheme]
        except ValueError as exc:
            raise SourceError(f"The IMAP location's port is not a number: {exc}") from exc
        self.folder = unquote(parts.path.strip("/")) or "INBOX"
        self.user = credentials.get("username", "")
        self.password = credentials.get("password", "")
        self.limits = limits
        self.box: BaseMailBox | None = None
        self.uidvalidity = ""
        self.last: tuple[str, bytes, tuple[Attachment, ...]] | None = None  # uid, text, files

    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]:
        box = self._open()
        try:
            uids = list(box.uids("ALL"))
        except (ImapToolsError, *NETWORK_ERRORS) as exc:
            raise SourceError(f"The IMAP folder {self.folder!r} cannot be listed: {exc}") from exc
        batch: list[str] = []
        for uid in uids:
            seen = known.get(self._key(uid))
            if seen is not None and seen.marker == self.uidvalidity:
                yield from self._known(uid, seen, known)
                continue
            batch.append(uid)
            if len(batch) >= settings.RAG_SOURCE_IMAP_BATCH:
                yield from self._new(batch)
                batch = []
        yield from self._new(batch)

    def fetch(self, item: Listed) -> bytes:
        uid, _, name = item.key.removeprefix(f"{self.folder}/").partition("/")
        uid = uid.removesuffix(".eml")
        text, files = self._message(uid)
        if not name:
            return text
        for attachment, its_name in zip(files, _attachment_names(files), strict=True):
            if its_name == name:
                return attachment.data
        raise ItemError(f"The message {uid} no longer has the attachment {name!r}.")

    def close(self) -> None:
        if self.box is not None:
            try:
                self.box.logout()
            except (ImapToolsError, *NETWORK_ERRORS):
                pass  # the server has gone already: nothing to close
            self.box = None

    def _open(self) -> BaseMailBox:
        kind = MailBox if self.scheme == "imaps" else MailBoxUnencrypted
        try:
            box = kind(self.host, port=self.port, timeout=self.limits.timeout_s)
            box.login(self.user, self.password, initial_folder=None)
            status = box.folder.status(self.folder, ["UIDVALIDITY"])
            box.folder.set(self.folder, readonly=True)
        except MailboxLoginError as exc:
            raise SourceError("The IMAP server refused the credentials.") from exc
        except ImapToolsError as exc:
            raise SourceError(f"The IMAP folder {self.folder!r} cannot be opened: {exc}") from exc
        except NETWORK_ERRORS as exc:
            raise SourceError(
                f"The IMAP server {self.host}:{self.port} cannot be reached: {exc}"
            ) from exc
        self.box, self.uidvalidity = box, str(status["UIDVALIDITY"])
        return box

    def _known(self, uid: str, seen: Known, known: Mapping[str, Known]) -> Iterator[Listed]:
        """A message the last sync stored: listed from what it kept, nothing fetched."""
        yield Listed(self._key(uid), self.uidvalidity, self._url(uid), extra=seen.extra)
        for name in seen.extra.get("attachments", ()):  # type: ignore[attr-defined]
            key = f"{self.folder}/{uid}/{name}"
            extra = known[key].extra if key in known else {}
            yield Listed(key, self.uidvalidity, self._url(uid, name), extra=extra)

    def _new(self, uids: list[str]) -> Iterator[Listed]:
        """New messages: their sizes first (headers only), then those within the limit whole,
        so a message over the limit is never downloaded."""
        if not uids:
            return
        limit = self.limits.max_file_bytes
        try:
            heads = self._box().fetch(uid_list=uids, mark_seen=False, headers_only=True, bulk=True)
            sizes = {head.uid: head.size_rfc822 for head in heads}
            within = [uid for uid in uids if sizes.get(uid, 0) <= limit]
            # An empty uid_list would make imap-tools fetch the whole folder: never ask with one.
            fetched = (
                self._box().fetch(uid_list=within, mark_seen=False, bulk=True) if within else ()
            )
            messages = [message for message in fetched if message.uid is not None]
        except (ImapToolsError, *NETWORK_ERRORS) as exc:
            raise SourceError(f"The IMAP server stopped answering mid-listing: {exc}") from exc
        for uid in uids:
            if sizes.get(uid, 0) > limit:
                error = f"The message is {sizes[uid]:,} bytes; the limit is {limit:,} bytes."
                yield Listed(
                    self._key(uid), self.uidvalidity, self._url(uid), extra={"error": error}
                )
        for message in messages:
            yield from self._listed(str(message.uid), message.obj.as_bytes())

    def _listed(self, uid: str, raw: bytes) -> Iterator[Listed]:
        key, url = self._key(uid), self._url(uid)
        if len(raw) > self.limits.max_file_bytes:
            error = f"The message is over the limit of {self.limits.max_file_bytes:,} bytes."
            yield Listed(key, self.uidvalidity, url, extra={"error": error})
            return
        try:
            text, files = _split(raw)
        except ItemError as exc:
            yield Listed(key, self.uidvalidity, url, extra={"error": str(exc)})
            return
        self.last = (uid, text, files)
        names = [name for name in _attachment_names(files) if supported(name)]
        message_id = str(_parsed(raw).get("Message-ID", ""))[:300]
        extra = {"attachments": names, "message_id": message_id}
        yield Listed(key, self.uidvalidity, url, size=len(text), data=text, extra=extra)
        for name in names:
            yield Listed(f"{self.folder}/{uid}/{name}", self.uidvalidity, self._url(uid, name))

    def _message(self, uid: str) -> tuple[bytes, tuple[Attachment, ...]]:
        if self.last is None or self.last[0] != uid:
            try:
                fetched = list(self._box().fetch(uid_list=[uid], mark_seen=False))
            except (ImapToolsError, *NETWORK_ERRORS) as exc:
                raise ItemError(f"The message cannot be read: {exc}") from exc
            if not fetched:
                raise ItemError(f"The message {uid} is gone from the folder.")
            raw = fetched[0].obj.as_bytes()
            if len(raw) > self.limits.max_file_bytes:
                raise ItemError(
                    f"The message is over the limit of {self.limits.max_file_bytes:,} bytes."
                )
            self.last = (uid, *_split(raw))
        return self.last[1], self.last[2]

    def _box(self) -> BaseMailBox:
        return self.box if self.box is not None else self._open()

    def _key(self, uid: str) -> str:
        return f"{self.folder}/{uid}.eml"

    def _url(self, uid: str, attachment: str = "") -> str:
        """An IMAP URL of RFC 5092: the folder, its UIDVALIDITY and the message's UID."""
        url = f"{self.scheme}://{self.host}:{self.port}/{quote(self.folder)};UIDVALIDITY="
        url += f"{self.uidvalidity}/;UID={uid}"
        return url + (f"/;SECTION={quote(attachment)}" if attachment else "")


def _parsed(raw: bytes) -> EmailMessage:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)  # the default policy always makes one
    return message


def _split(raw: bytes) -> tuple[bytes, tuple[Attachment, ...]]:
    """The message as headers and text only, and its attachments (read the way an uploaded
    .eml's are). Raises ItemError when it cannot be read."""
    try:
        return _split_read(raw)
    except DocumentError as exc:
        raise ItemError(str(exc)) from exc
    except Exception as exc:  # a damaged message (a bad charset, a broken part) costs itself
        raise ItemError(f"The message could not be read ({type(exc).__name__}).") from exc


def _split_read(raw: bytes) -> tuple[bytes, tuple[Attachment, ...]]:
    attachments = parse_eml(raw).attachments
    message, text = _parsed(raw), EmailMessage()
    for name in KEPT_HEADERS:
        if (value := message.get(name)) is not None:
            try:
                text[name] = str(value)
            except (ValueError, TypeError):
                continue  # a header the standard library cannot write back is left out
    body = message.get_body(preferencelist=("plain", "html"))
    content = body.get_content() if body is not None else ""
    subtype = body.get_content_subtype() if body is not None else "plain"
    text.set_content(content if isinstance(content, str) else "", subtype=subtype)
    return text.as_bytes(), attachments


def _attachment_names(files: tuple[Attachment, ...]) -> list[str]:
    """Each a single path part, unique in the message (a second `a.pdf` is `2-a.pdf`)."""
    names: list[str] = []
    for number, attachment in enumerate(files, start=1):
        name = attachment.filename.replace("/", "_").replace("\\", "_").strip(". ")
        name = name or "attachment"
        names.append(f"{number}-{name}" if name in names else name)
    return names
