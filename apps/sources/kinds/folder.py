"""A folder on this machine (or a share mounted on it): files below it, by relative path.

The change marker is the modification time and size, so an unchanged file is not read.
Symbolic links to folders are not followed (no loops); a file whose name is not valid UTF-8
is reported on its own and never stops the rest.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from apps.sources.kinds.base import ItemError, Known, Limits, Listed, SourceError, supported


class FolderConnector:
    def __init__(self, *, location: str, limits: Limits) -> None:
        self.root = Path(location).expanduser()
        self.limits = limits

    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]:
        if not self.root.is_dir():
            raise SourceError(f"The folder {self.root} does not exist or is not a folder.")
        for folder, dirs, files in os.walk(self.root, onerror=_raise, followlinks=False):
            dirs.sort()
            for name in sorted(files):
                path = Path(folder) / name
                key = path.relative_to(self.root).as_posix()
                if supported(key):
                    yield _listed(key, path)

    def fetch(self, item: Listed) -> bytes:
        path = self.root / item.key
        try:
            size = path.stat().st_size
            if size > self.limits.max_file_bytes:
                raise ItemError(
                    f"The file is {size:,} bytes; the limit is {self.limits.max_file_bytes:,} bytes."
                )
            return path.read_bytes()
        except OSError as exc:
            raise ItemError(f"The file cannot be read: {exc.strerror or exc}") from exc


def _listed(key: str, path: Path) -> Listed:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        shown = key.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return Listed(key=shown, marker="", location=shown, extra={"error": "name is not UTF-8"})
    try:
        stat = path.stat()
    except OSError:
        return Listed(key=key, marker="", location=str(path), extra={"error": "cannot stat"})
    return Listed(
        key=key, marker=f"{stat.st_mtime_ns}:{stat.st_size}", location=str(path), size=stat.st_size
    )


def _raise(error: OSError) -> None:
    raise SourceError(f"The folder cannot be listed: {error}") from error
