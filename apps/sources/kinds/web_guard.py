"""What a website crawl may reach: the public web, not this machine or its networks.

A crawl follows links and redirects that the site chooses, so without this guard a page (or a
redirect) could point it at loopback services, the private network, or a cloud's metadata
service (169.254.169.254) and ingest what they answer. Every request the crawl sends, each
redirect hop included, is checked after its host name is resolved: when any address it resolves
to is not a public one (loopback, private, link-local, shared, reserved, multicast), it is refused,
unless that address is in RAG_SOURCE_WEB_ALLOWED_NETWORKS (an intranet site an operator means
to crawl, or the tests' own loopback server).

Limit: the connection resolves the name again; a DNS server that answers differently the second
time (rebinding) is not caught here, so a deployment that must rule that out also filters at its
egress.
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


def request_guard(*, allowed: Sequence[Network]) -> Callable[[httpx.Request], None]:
    """An httpx request hook: httpx calls it for every request, each redirect hop too."""

    def guard(request: httpx.Request) -> None:
        host = request.url.host
        for address in _resolved(host, request):
            if address_refused(address, allowed=allowed):
                raise InternalAddress(
                    f"{host} is an internal address ({address}); a website source reads the "
                    "public web only, unless RAG_SOURCE_WEB_ALLOWED_NETWORKS allows it.",
                    request=request,
                )

    return guard


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
