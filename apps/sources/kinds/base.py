"""What every kind of source offers the sync: a listing with change markers, and a fetch.

A kind raises `SourceError` with a message a person can act on (wrong credentials, host not
reachable, a limit passed); the sync records it on the source and keeps what is stored.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from django.conf import settings

from apps.corpus.parsing import SUPPORTED_SUFFIXES


class SourceError(Exception):
    """The source as a whole cannot be read now (listing failed): nothing is deleted."""


class ItemError(Exception):
    """One item cannot be read: recorded on the item, the sync goes on."""


@dataclass(frozen=True)
class Known:
    """What the last sync stored about an item, for kinds that ask the server conditionally."""

    marker: str
    extra: Mapping[str, object]


@dataclass(frozen=True)
class Listed:
    key: str  # unique in the source: a relative path, an object key, a URL
    marker: str  # changes whenever the content does (mtime+size, ETag, Last-Modified)
    location: str  # where a person finds it
    size: int | None = None
    # Kinds that must read an item to list it (a website) hand over what they read.
    data: bytes | None = None
    unchanged: bool = False  # the server said so (HTTP 304): nothing to fetch
    extra: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Limits:
    max_files: int
    max_file_bytes: int
    max_pages: int
    max_depth: int
    timeout_s: float


class Connector(Protocol):
    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]: ...

    def fetch(self, item: Listed) -> bytes: ...


@runtime_checkable
class Closing(Protocol):
    """A connector holding a session (SMB, IMAP): closed when its sync ends, however it ends."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class Patterns:
    include: tuple[str, ...]
    exclude: tuple[str, ...]

    @classmethod
    def from_text(cls, *, include: str, exclude: str) -> Patterns:
        def lines(text: str) -> tuple[str, ...]:
            return tuple(line.strip() for line in text.splitlines() if line.strip())

        return cls(lines(include), lines(exclude))

    def admits(self, key: str) -> bool:
        name = key.rsplit("/", 1)[-1]

        def hit(pattern: str) -> bool:
            return fnmatch.fnmatchcase(key, pattern) or fnmatch.fnmatchcase(name, pattern)

        if self.include and not any(hit(p) for p in self.include):
            return False
        return not any(hit(p) for p in self.exclude)


def supported(key: str) -> bool:
    """A file kind lists only what ingestion can read; anything else is not the source's."""
    suffix = "." + key.rsplit(".", 1)[-1].lower() if "." in key.rsplit("/", 1)[-1] else ""
    return suffix in SUPPORTED_SUFFIXES


def key_safe(key: str) -> str:
    """A relative key without `..`, absolute or empty parts; ItemError otherwise (a bucket
    may hold keys like `../../etc/x`, which must never become a path or a name)."""
    parts = key.replace("\\", "/").split("/")
    if key.startswith(("/", "\\")) or any(p in ("", ".", "..") for p in parts):
        raise ItemError(f"The key {key[:200]!r} is not a plain relative path.")
    return "/".join(parts)


def limits_default() -> dict[str, float]:
    return {
        "max_files": settings.RAG_SOURCE_MAX_FILES,
        "max_file_bytes": settings.RAG_MAX_UPLOAD_BYTES,
        "max_pages": settings.RAG_SOURCE_MAX_PAGES,
        "max_depth": settings.RAG_SOURCE_MAX_DEPTH,
        "timeout_s": settings.RAG_SOURCE_TIMEOUT_S,
    }
