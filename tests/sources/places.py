"""A place at a real source that a test writes to, moves in and deletes from, seen through
the source it backs: a folder, an S3 bucket, a WebDAV or SMB share's folder, a website's
sitemap, a mailbox's folder.

Keys are written without a suffix; each place adds its own (`.md` for files, `.html` pages).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from apps.sources.models import SourceKind

_clock = [time.time()]


def _later(path: Path) -> None:
    """Each write looks newer than the last, even within one second (HTTP dates are seconds)."""
    _clock[0] += 5
    os.utime(path, (_clock[0], _clock[0]))


@dataclass
class DiskPlace:
    """A folder, or a WebDAV share's folder on the disk its server serves."""

    kind: SourceKind
    root: Path
    location: str
    credentials: dict[str, str] = field(default_factory=dict)
    suffix: str = ".md"

    def path(self, key: str) -> Path:
        return self.root / f"{key}{self.suffix}"

    def put(self, key: str, text: str) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        _later(path)

    def remove(self, key: str) -> None:
        self.path(key).unlink()

    def move(self, old: str, new: str) -> None:
        self.path(new).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(self.path(old), self.path(new))


@dataclass
class BucketPlace:
    """One prefix of the session's bucket (every bucket costs SeaweedFS volumes)."""

    client: Any
    bucket: str
    prefix: str
    location: str
    credentials: dict[str, str]
    kind: SourceKind = SourceKind.S3

    def put(self, key: str, text: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=text.encode())

    def remove(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def move(self, old: str, new: str) -> None:
        source = {"Bucket": self.bucket, "Key": self._key(old)}
        self.client.copy_object(Bucket=self.bucket, Key=self._key(new), CopySource=source)
        self.remove(old)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}.md"


@dataclass
class SitePlace:
    """Pages of a website, listed by its sitemap (so a page is an item, nothing else is)."""

    root: Path
    url: str
    kind: SourceKind = SourceKind.WEB
    credentials: dict[str, str] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)

    @property
    def location(self) -> str:
        return f"{self.url}/sitemap.xml"

    def put(self, key: str, text: str) -> None:
        path = self.root / f"{key}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = f"<html><head><title>{key}</title></head><body><nav>Menu</nav><main>"
        path.write_text(f"{body}<h1>{key}</h1><p>{text}</p></main></body></html>")
        _later(path)
        if key not in self.pages:
            self.pages.append(key)
        self._sitemap()

    def remove(self, key: str) -> None:
        (self.root / f"{key}.html").unlink()
        self.pages.remove(key)
        self._sitemap()

    def move(self, old: str, new: str) -> None:
        (self.root / f"{new}.html").parent.mkdir(parents=True, exist_ok=True)
        shutil.move(self.root / f"{old}.html", self.root / f"{new}.html")
        self.pages[self.pages.index(old)] = new
        self._sitemap()

    def _sitemap(self) -> None:
        locs = "".join(f"<url><loc>{self.url}/{page}.html</loc></url>" for page in self.pages)
        xmlns = "http://www.sitemaps.org/schemas/sitemap/0.9"
        sitemap = self.root / "sitemap.xml"
        sitemap.write_text(f'<?xml version="1.0"?><urlset xmlns="{xmlns}">{locs}</urlset>')


@dataclass
class MailPlace:
    """A folder of the session's Dovecot mailbox, filled by APPEND as a mail client would."""

    host: str
    port: int
    folder: str
    credentials: dict[str, str]
    kind: SourceKind = SourceKind.IMAP
    uids: dict[str, str] = field(default_factory=dict)  # the test's name of a message -> UID

    @property
    def location(self) -> str:
        return f"imap://{self.host}:{self.port}/{self.folder}"

    def box(self) -> Any:
        from imap_tools import MailBoxUnencrypted

        box = MailBoxUnencrypted(self.host, port=self.port)
        user, password = self.credentials["username"], self.credentials["password"]
        return box.login(user, password, initial_folder=None)

    def put(self, key: str, text: str, *, attachments: dict[str, bytes] | None = None) -> None:
        """A new message (a changed message is a new one: IMAP messages never change)."""
        message = EmailMessage()
        message["Subject"], message["From"] = f"About {key}", "Bob Stone <bob@example.org>"
        message["Date"], message["Message-ID"] = "Tue, 01 Dec 2026 10:00:00 +0000", f"<{key}@t>"
        message.set_content(text)
        for name, data in (attachments or {}).items():
            message.add_attachment(
                data, maintype="application", subtype="octet-stream", filename=name
            )
        with self.box() as box:
            if not box.folder.exists(self.folder):
                box.folder.create(self.folder)
            _status, answer = box.append(message.as_bytes(), self.folder)
            self.uids[key] = answer[0].decode().split("]")[0].split()[-1]

    def remove(self, key: str) -> None:
        with self.box() as box:
            box.folder.set(self.folder)
            box.delete(self.uids.pop(key))
