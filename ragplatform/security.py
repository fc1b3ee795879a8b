"""The Content-Security-Policy header: scripts only from our own static files.

Django 5.2 has no CSP of its own; one fixed policy is all the platform needs. Pages carry no
inline script or event handler (data for scripts travels in `json_script` blocks, which the
browser never executes), so `script-src 'self'` costs nothing. Inline styles stay allowed:
the admin and the progress bars use style attributes, and styles cannot run code.
"""

from __future__ import annotations

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
