"""An SMB shared folder (a Windows or Samba share), read directly with smbprotocol.

The location is `smb://host[:port]/share[/folder]` (or `\\\\host\\share\\folder`). Folders are
walked with one directory query each, whose answer already holds every file's size and
modification time: the change marker, so an unchanged file costs no extra round trip and is not
read. Links and other reparse points are not followed (no loops). Credentials: `username`
(`DOMAIN\\user` for a domain account) and `password`; the session is NTLM or Kerberos, as the
server negotiates, and encrypted when the server asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import smbclient
from smbprotocol.exceptions import AccessDenied, LogonFailure, SMBException
from smbprotocol.file_info import FileAttributes

from apps.sources.kinds.base import (
    ItemError,
    Known,
    Limits,
    Listed,
    SourceError,
    key_safe,
    supported,
)

DEFAULT_PORT = 445
SKIPPED = FileAttributes.FILE_ATTRIBUTE_REPARSE_POINT  # symbolic links, junctions, mount points


def smb_location(location: str) -> tuple[str, int, str, str]:
    """(host, port, share, folder) of `smb://host:port/share/folder` or `\\\\host\\share\\folder`."""
    if location.startswith("\\\\"):
        location = "smb://" + location[2:].replace("\\", "/")
    parts = urlsplit(location)
    path = [unquote(p) for p in parts.path.split("/") if p]
    if parts.scheme != "smb" or not parts.hostname or not path:
        raise SourceError(
            "An SMB location is smb://host/share/folder (or \\\\host\\share\\folder)."
        )
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise SourceError(f"The SMB location's port is not a number: {exc}") from exc
    return parts.hostname, port, path[0], "\\".join(path[1:])


class SmbConnector:
    def __init__(self, *, location: str, credentials: Mapping[str, str], limits: Limits) -> None:
        self.host, self.port, share, folder = smb_location(location)
        self.root = f"\\\\{self.host}\\{share}" + (f"\\{folder}" if folder else "")
        self.shown = f"smb://{self.host}:{self.port}/{share}" + (
            f"/{folder.replace(chr(92), '/')}" if folder else ""
        )
        self.user = credentials.get("username", "")
        self.password = credentials.get("password", "")
        self.limits = limits
        # A cache of our own: the module's global one would share sessions between sources.
        self.cache: dict[str, Any] = {}
        self.options = {"port": self.port, "connection_cache": self.cache}

    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]:
        self._connect()
        folders, walked = [""], set[int]()
        while folders:
            relative = folders.pop(0)
            for entry in self._scandir(relative):
                info = entry.smb_info
                key = f"{relative}/{entry.name}" if relative else entry.name
                if info.file_attributes & SKIPPED:
                    continue
                if entry.is_dir():
                    # Samba shows a link to a folder as the folder itself: its file id repeats.
                    if info.file_id not in walked:
                        walked.add(info.file_id)
                        folders.append(key)
                elif supported(key):
                    modified = int(info.last_write_time.timestamp() * 1_000_000)
                    yield Listed(
                        key=key,
                        marker=f"{modified}:{info.end_of_file}",
                        location=f"{self.shown}/{key}",
                        size=info.end_of_file,
                    )

    def fetch(self, item: Listed) -> bytes:
        if item.size is not None and item.size > self.limits.max_file_bytes:
            raise ItemError(
                f"The file is {item.size:,} bytes; the limit is {self.limits.max_file_bytes:,} bytes."
            )
        path = self._path(key_safe(item.key))
        try:
            with smbclient.open_file(path, mode="rb", **self.options) as handle:
                data = handle.read(self.limits.max_file_bytes + 1)
        except (SMBException, OSError, ValueError) as exc:
            raise ItemError(f"The file cannot be read: {exc}") from exc
        if len(data) > self.limits.max_file_bytes:
            raise ItemError(f"The file is over the limit of {self.limits.max_file_bytes:,} bytes.")
        return bytes(data)

    def close(self) -> None:
        smbclient.reset_connection_cache(fail_on_error=False, connection_cache=self.cache)

    def _connect(self) -> None:
        try:
            smbclient.register_session(
                self.host,
                username=self.user or None,
                password=self.password or None,
                connection_timeout=int(self.limits.timeout_s),
                **self.options,
            )
        except (LogonFailure, AccessDenied) as exc:
            raise SourceError("The SMB server refused the credentials.") from exc
        except SMBException as exc:
            raise SourceError(f"The SMB server refused the session: {exc}") from exc
        except (OSError, ValueError) as exc:  # smbprotocol reports an unreachable host so
            raise SourceError(f"The SMB server {self.host}:{self.port} cannot be reached.") from exc

    def _scandir(self, relative: str) -> list[Any]:
        try:
            with smbclient.scandir(self._path(relative), **self.options) as entries:
                return sorted(entries, key=lambda entry: entry.name)
        except (SMBException, OSError, ValueError) as exc:
            raise SourceError(
                f"The SMB folder {self.shown}/{relative} cannot be listed: {exc}"
            ) from exc

    def _path(self, key: str) -> str:
        return self.root + ("\\" + key.replace("/", "\\") if key else "")
