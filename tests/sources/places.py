"""A place at a real source that a test writes to, moves in and deletes from, seen through
the source it backs: a folder, an S3 bucket, a WebDAV share's folder, a website's sitemap.

Keys are written without a suffix; each place adds its own (`.md` for files, `.html` pages).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
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
