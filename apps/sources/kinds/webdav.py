"""A WebDAV folder (Nextcloud, SharePoint, many intranets), listed with PROPFIND.

Folders are walked one level at a time (Depth: 1, which every server allows); the change
marker is the ETag, or the modification time and size where a server gives no ETag.
Credentials: `username`, `password` (HTTP Basic or Digest).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from urllib.parse import unquote, urljoin, urlsplit

import httpx
from lxml import etree

from apps.sources.kinds.base import (
    ItemError,
    Known,
    Limits,
    Listed,
    SourceError,
    key_safe,
    supported,
)

PROPFIND = b"""<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getetag/><d:getlastmodified/>
<d:getcontentlength/></d:prop></d:propfind>"""
DAV = "{DAV:}"
MAX_FOLDERS = 10_000  # a server answering with folders forever is not walked forever


class WebDavConnector:
    def __init__(self, *, location: str, credentials: Mapping[str, str], limits: Limits) -> None:
        if urlsplit(location).scheme not in ("http", "https"):
            raise SourceError("A WebDAV location is an http:// or https:// URL of a folder.")
        self.base = location.rstrip("/") + "/"
        self.base_path = unquote(urlsplit(self.base).path)
        self.limits = limits
        user, password = credentials.get("username", ""), credentials.get("password", "")
        self.client = httpx.Client(
            timeout=limits.timeout_s, auth=(user, password) if user else None
        )

    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]:
        folders, walked = [self.base], 0
        while folders and walked < MAX_FOLDERS:
            folder = folders.pop(0)
            walked += 1
            for href, props in self._propfind(folder):
                path = unquote(urlsplit(href).path)
                if not path.startswith(self.base_path) or path.rstrip("/") == folder_path(folder):
                    continue
                key = path[len(self.base_path) :].strip("/")
                if props.find(f"{DAV}resourcetype/{DAV}collection") is not None:
                    folders.append(urljoin(self.base, href))
                elif key and supported(key):
                    yield _listed(key, urljoin(self.base, href), props)

    def fetch(self, item: Listed) -> bytes:
        key_safe(item.key)
        if item.size is not None and item.size > self.limits.max_file_bytes:
            raise ItemError(
                f"The file is {item.size:,} bytes; the limit is {self.limits.max_file_bytes:,} bytes."
            )
        try:
            answer = self.client.get(item.location)
            answer.raise_for_status()
        except httpx.HTTPError as exc:
            raise ItemError(f"The file cannot be read: {exc}") from exc
        if len(answer.content) > self.limits.max_file_bytes:
            raise ItemError(f"The file is over the limit of {self.limits.max_file_bytes:,} bytes.")
        return answer.content

    def _propfind(self, url: str) -> list[tuple[str, etree._Element]]:
        headers = {"Depth": "1", "Content-Type": "application/xml"}
        try:
            answer = self.client.request("PROPFIND", url, content=PROPFIND, headers=headers)
        except httpx.HTTPError as exc:
            raise SourceError(f"The WebDAV server cannot be reached: {exc}") from exc
        if answer.status_code in (401, 403):
            raise SourceError("The WebDAV server refused the credentials.")
        if answer.status_code != 207:
            raise SourceError(f"The WebDAV server answered {answer.status_code} for {url}.")
        try:
            root = etree.fromstring(answer.content, parser=etree.XMLParser(resolve_entities=False))
        except etree.XMLSyntaxError as exc:
            raise SourceError(f"The WebDAV server's listing is not XML: {exc}") from exc
        found = []
        for response in root.iter(f"{DAV}response"):
            href = response.findtext(f"{DAV}href") or ""
            props = response.find(f"{DAV}propstat/{DAV}prop")
            if href and props is not None:
                found.append((href, props))
        return found


def folder_path(url: str) -> str:
    return unquote(urlsplit(url).path).rstrip("/")


def _listed(key: str, url: str, props: etree._Element) -> Listed:
    etag = props.findtext(f"{DAV}getetag") or ""
    modified = props.findtext(f"{DAV}getlastmodified") or ""
    size_text = props.findtext(f"{DAV}getcontentlength") or ""
    size = int(size_text) if size_text.isdigit() else None
    return Listed(key=key, marker=etag or f"{modified}:{size}", location=url, size=size)
