"""The Content-Security-Policy header: scripts only from our own static files; the origins the
chat socket accepts.

Django 5.2 has no CSP of its own; one fixed policy is all the platform needs. Pages carry no
inline script or event handler (data for scripts travels in `json_script` blocks, which the
browser never executes), so `script-src 'self'` costs nothing. Inline styles stay allowed:
the admin and the progress bars use style attributes, and styles cannot run code.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import ParseResult

from channels.security.websocket import OriginValidator
from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.deprecation import MiddlewareMixin

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",  # fetch, SSE and the chat WebSocket, same origin only
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware(MiddlewareMixin):
    """Adds the policy to every response that does not set its own (sync and async alike)."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


def socket_origins() -> list[str]:
    """The page origins the chat socket accepts. Production: the site's HTTPS origins
    (https://<each allowed host>, port 443) and CSRF_TRUSTED_ORIGINS, scheme and port compared,
    so a page on plain http (or another port) cannot open it. Development: any scheme and port
    of an allowed host, as `runserver` and `make serve` use plain http on their own port."""
    trusted = list(settings.CSRF_TRUSTED_ORIGINS)
    if settings.RAG_ENV != "production":
        return [*settings.ALLOWED_HOSTS, *trusted]
    return [f"https://{host}" for host in settings.ALLOWED_HOSTS] + trusted


class SiteOriginValidator(OriginValidator):
    """channels' OriginValidator over `socket_origins()`, read at each connection (channels'
    AllowedHostsOriginValidator compares host names only, whatever the scheme)."""

    def __init__(self, application: Any) -> None:
        super().__init__(application, allowed_origins=[])

    def valid_origin(self, parsed_origin: ParseResult | None) -> bool:
        if parsed_origin is None:  # no Origin header: not a browser page of this site
            return False
        return any(
            pattern == "*" or self.match_allowed_origin(parsed_origin, pattern)
            for pattern in socket_origins()
        )
