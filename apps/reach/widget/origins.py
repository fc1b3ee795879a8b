"""Which pages may use the widget: an exact list of origins (scheme, host and port), never a
wildcard, because the answer is readable by the page that asked for it."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_normal(raw: str) -> str | None:
    """`scheme://host[:port]` in lower case without a default port; None when `raw` is not an
    origin (a path, a query, credentials, no host, another scheme, or the browser's "null")."""
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:  # a port out of range or not a number
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        return None
    scheme = parts.scheme.lower()
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown_port = "" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}"
    return f"{scheme}://{host.lower()}{shown_port}"


def origins_parse(raw: list[str], *, name: str) -> frozenset[str]:
    """The configured origins, normalised; a value that is not an origin stops start-up."""
    origins: set[str] = set()
    for item in raw:
        normal = origin_normal(item)
        if normal is None:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not an origin such as https://intranet.example.org "
                "(a scheme and host, an optional port, no path and no wildcard)"
            )
        origins.add(normal)
    return frozenset(origins)


def origin_allowed(*, origin: str | None, allowed: frozenset[str]) -> bool:
    """True only for a request that names a listed origin; none (a non-browser client or a
    same-origin GET) is refused too, since the widget is only ever asked from another page."""
    if not origin:
        return False
    normal = origin_normal(origin)
    return normal is not None and normal in allowed
