"""The connector for a source's kind, built with its decrypted credentials and limits."""

from __future__ import annotations

from apps.sources.credentials import CredentialsUnreadable, credentials_decrypt
from apps.sources.kinds.base import Connector, Limits, SourceError, limits_default
from apps.sources.kinds.folder import FolderConnector
from apps.sources.kinds.imap import ImapConnector
from apps.sources.kinds.s3 import S3Connector
from apps.sources.kinds.smb import SmbConnector
from apps.sources.kinds.web import WebConnector
from apps.sources.kinds.webdav import WebDavConnector
from apps.sources.models import Source, SourceKind


def source_limits(*, source: Source) -> Limits:
    default = limits_default()

    def pick(value: int | None, name: str) -> int:
        return int(default[name]) if value is None else value

    return Limits(
        max_files=pick(source.max_files, "max_files"),
        max_file_bytes=pick(source.max_file_bytes, "max_file_bytes"),
        max_pages=pick(source.max_pages, "max_pages"),
        max_depth=pick(source.max_depth, "max_depth"),
        timeout_s=default["timeout_s"],
    )


def connector_for(*, source: Source) -> Connector:
    try:
        credentials = credentials_decrypt(token=source.credentials_encrypted)
    except CredentialsUnreadable as exc:
        raise SourceError(str(exc)) from exc
    limits = source_limits(source=source)
    match source.kind:
        case SourceKind.FOLDER:
            return FolderConnector(location=source.location, limits=limits)
        case SourceKind.S3:
            return S3Connector(location=source.location, credentials=credentials, limits=limits)
        case SourceKind.WEB:
            return WebConnector(location=source.location, limits=limits)
        case SourceKind.WEBDAV:
            return WebDavConnector(location=source.location, credentials=credentials, limits=limits)
        case SourceKind.SMB:
            return SmbConnector(location=source.location, credentials=credentials, limits=limits)
        case SourceKind.IMAP:
            return ImapConnector(location=source.location, credentials=credentials, limits=limits)
    raise SourceError(f"Unknown kind of source: {source.kind}")
