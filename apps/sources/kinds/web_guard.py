"""What a website crawl may reach: the public web, not this machine or its networks.

A crawl follows links and redirects that the site chooses, so without this guard a page (or a
redirect) could point it at loopback services, the private network, or a cloud's metadata
service (169.254.169.254) and ingest what they answer. Every request the crawl sends, each
redirect hop included, is checked after its host name is resolved: when any address it resolves
to is not a public one (loopback, private, link-local, shared, reserved, multicast), it is refused,
unless that address is in RAG_SOURCE_WEB_ALLOWED_NETWORKS (an intranet site an operator means
to crawl, or the tests' own loopback server).

The connection then goes to the address that was checked (GuardedTransport), never to a second
lookup's, so a DNS server that answers differently the second time (rebinding) gains nothing.
Requests that an HTTP proxy from the environment carries are checked the same way, but the proxy
resolves the name itself.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence

import httpx
from django.conf import settings

from apps.sources.kinds.base import SourceError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class InternalAddress(httpx.RequestError):
    """A request the crawl refused to send: its host is an internal address."""


def networks_allowed() -> tuple[Network, ...]:
    found: list[Network] = []
    for text in settings.RAG_SOURCE_WEB_ALLOWED_NETWORKS:
        try:
            found.append(ipaddress.ip_network(text, strict=False))
        except ValueError as exc:
            raise SourceError(
                f"RAG_SOURCE_WEB_ALLOWED_NETWORKS holds {text!r}, which is not a network "
                "(write 10.0.0.0/8 or 127.0.0.1/32)."
            ) from exc
    return tuple(found)


def address_internal(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is loopback too
    # Not global covers loopback, private, link-local, shared (100.64/10), reserved, unspecified.
    return not address.is_global or address.is_multicast


def address_refused(address: Address, *, allowed: Sequence[Network]) -> bool:
    return address_internal(address) and not any(address in network for network in allowed)


def address_checked(request: httpx.Request, *, allowed: Sequence[Network]) -> Address:
    """The address to connect to, once every address the host resolves to passed."""
    host = request.url.host
    addresses = _resolved(host, request)
    for address in addresses:
        if address_refused(address, allowed=allowed):
            raise InternalAddress(
                f"{host} is an internal address ({address}); a website source reads the "
                "public web only, unless RAG_SOURCE_WEB_ALLOWED_NETWORKS allows it.",
                request=request,
            )
    return addresses[0]


def request_guard(*, allowed: Sequence[Network]) -> Callable[[httpx.Request], None]:
    """An httpx request hook: httpx calls it for every request, each redirect hop too, also
    those a proxy from the environment carries (which never reach GuardedTransport)."""

    def guard(request: httpx.Request) -> None:
        address_checked(request, allowed=allowed)

    return guard


class GuardedTransport(httpx.BaseTransport):
    """Connects to the very address that was checked (the Host header and the TLS server name
    stay the site's), so a DNS answer that changes between the check and the connection
    (rebinding) cannot lead the crawl anywhere else."""

    def __init__(self, *, allowed: Sequence[Network]) -> None:
        self.allowed = tuple(allowed)
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        address = address_checked(request, allowed=self.allowed)
        if request.url.host == str(address):
            return self.inner.handle_request(request)
        pinned = httpx.Request(
            request.method,
            request.url.copy_with(host=str(address)),
            headers=request.headers,
            stream=request.stream,
            extensions={**request.extensions, "sni_hostname": request.url.host},
        )
        return self.inner.handle_request(pinned)

    def close(self) -> None:
        self.inner.close()


def _resolved(host: str, request: httpx.Request) -> list[Address]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    port = request.url.port or (443 if request.url.scheme == "https" else 80)
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise httpx.ConnectError(f"{host} cannot be resolved: {exc}", request=request) from exc
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in answers]
