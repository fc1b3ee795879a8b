"""A website: pages reached from a start URL (or listed by a sitemap), on the same site only.

Links are followed breadth-first up to the depth and page limits; robots.txt is honoured.
Every request, each redirect hop too, passes web_guard: internal addresses are refused.
Each page is asked for with its stored ETag and Last-Modified, so an unchanged page answers
304 and is not read again (its links are kept from the last sync). Pages are ingested as HTML,
whose parser keeps the main text (navigation, footers and scripts are dropped).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx
from lxml import etree
from selectolax.lexbor import LexborHTMLParser

from apps.sources.kinds.base import ItemError, Known, Limits, Listed, SourceError
from apps.sources.kinds.web_guard import GuardedTransport, networks_allowed, request_guard

USER_AGENT = "ragplatform-sources"
HTML_TYPES = ("text/html", "application/xhtml+xml")


def _site(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


class WebConnector:
    def __init__(self, *, location: str, limits: Limits) -> None:
        if urlsplit(location).scheme not in ("http", "https"):
            raise SourceError("A website source starts from an http:// or https:// URL.")
        self.start = urldefrag(location)[0]
        self.site = _site(self.start)
        self.limits = limits
        allowed = networks_allowed()
        self.client = httpx.Client(
            timeout=limits.timeout_s,
            follow_redirects=True,
            max_redirects=5,
            headers={"User-Agent": USER_AGENT},
            event_hooks={"request": [request_guard(allowed=allowed)]},
            transport=GuardedTransport(allowed=allowed),
        )
        self.robots = RobotFileParser()

    def items(self, *, known: Mapping[str, Known]) -> Iterator[Listed]:
        self._robots_load()
        starts = self._sitemap() if self.start.endswith(".xml") else [self.start]
        if not self.robots.can_fetch(USER_AGENT, self.start):
            raise SourceError(f"robots.txt of {self.start} forbids reading it.")
        queue = deque((url, 0) for url in starts)
        visited = set(starts)
        pages = 0
        while queue and pages < self.limits.max_pages:
            url, depth = queue.popleft()
            if not self.robots.can_fetch(USER_AGENT, url):
                continue
            listed = self._page(url, known.get(url), first=pages == 0 and url == self.start)
            pages += 1
            yield listed
            if depth >= self.limits.max_depth:
                continue
            for link in listed.extra.get("links", ()):  # type: ignore[attr-defined]
                if link not in visited:
                    visited.add(link)
                    queue.append((link, depth + 1))

    def fetch(self, item: Listed) -> bytes:
        if item.data is None:
            raise ItemError("The page was not read.")
        return item.data

    def _robots_load(self) -> None:
        robots_url = f"{self.site[0]}://{self.site[1]}/robots.txt"
        try:
            answer = self.client.get(robots_url)
        except httpx.HTTPError as exc:
            raise SourceError(f"The website {self.site[1]} cannot be reached: {exc}") from exc
        lines = answer.text.splitlines() if answer.status_code == 200 else []
        self.robots.parse(lines)

    def _sitemap(self) -> list[str]:
        try:
            answer = self.client.get(self.start)
            answer.raise_for_status()
            root = etree.fromstring(answer.content, parser=etree.XMLParser(resolve_entities=False))
        except (httpx.HTTPError, etree.XMLSyntaxError) as exc:
            raise SourceError(f"The sitemap {self.start} cannot be read: {exc}") from exc
        urls = [str(loc.text).strip() for loc in root.iter("{*}loc") if loc.text]
        return [url for url in dict.fromkeys(urls) if _site(url) == self.site]

    def _page(self, url: str, known: Known | None, *, first: bool) -> Listed:
        try:
            return self._page_read(url, known)
        except (httpx.HTTPError, ItemError) as exc:
            if first:
                raise SourceError(f"The start page {url} cannot be read: {exc}") from exc
            return Listed(key=url, marker="", location=url, extra={"error": _reason(exc)})

    def _page_read(self, url: str, known: Known | None) -> Listed:
        headers = _conditional(known.marker) if known else {}
        with self.client.stream("GET", url, headers=headers) as answer:
            if answer.status_code == 304 and known is not None:
                return Listed(url, known.marker, url, unchanged=True, extra=known.extra)
            answer.raise_for_status()
            if _site(str(answer.url)) != self.site:
                raise ItemError(f"It leads to another site ({answer.url}).")
            kind = answer.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind not in HTML_TYPES:
                raise ItemError(f"It is not an HTML page ({kind or 'no type'}).")
            data = _capped(answer, self.limits.max_file_bytes)
        marker = f"{answer.headers.get('etag', '')}|{answer.headers.get('last-modified', '')}"
        links = _links(str(answer.url), data, self.site)
        return Listed(
            url, marker.strip("|") and marker, url, len(data), data, extra={"links": links}
        )


def _capped(answer: httpx.Response, limit: int) -> bytes:
    data = bytearray()
    for piece in answer.iter_bytes():
        data.extend(piece)
        if len(data) > limit:
            raise ItemError(f"The page is over the limit of {limit:,} bytes.")
    return bytes(data)


def _conditional(marker: str) -> dict[str, str]:
    etag, _, modified = marker.partition("|")
    headers = {"If-None-Match": etag} if etag else {}
    if modified:
        headers["If-Modified-Since"] = modified
    return headers


def _links(base: str, data: bytes, site: tuple[str, str]) -> list[str]:
    found: dict[str, None] = {}
    for node in LexborHTMLParser(data).css("a[href]"):
        href = (node.attributes.get("href") or "").strip()
        url = urldefrag(urljoin(base, href))[0]
        if url and _site(url) == site:
            found[url] = None
    return list(found)


def _reason(exc: Exception) -> str:
    if isinstance(exc, httpx.TooManyRedirects):
        return "Too many redirects (a redirect loop?)."
    if isinstance(exc, httpx.HTTPStatusError):
        return f"The server answered {exc.response.status_code}."
    return str(exc) or type(exc).__name__
