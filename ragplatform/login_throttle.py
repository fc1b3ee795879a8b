"""Login throttling with django-axes: per client address and per account name.

Every login that goes through `authenticate(request, ...)` is counted: the chat login, the
admin login and API Basic auth (development only). After RAG_LOGIN_FAILURE_LIMIT failures
from one address, or against one account name, further attempts are refused with 429 for
RAG_LOGIN_COOLOFF_MINUTES, even with the right password; a successful login clears the
failures of that address and account.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request

from ragplatform.errors import HTTP_STATUS, FailureCode, json_error
from ragplatform.rate_limits import rate_count, rate_take

LOCKED_OUT = "Too many failed logins; try again in a few minutes."


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' backend, except for calls without a request.

    Those are not HTTP logins (the test client's `login()`, a shell): there is no client to
    throttle, and axes would refuse them outright.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        try:
            super().authenticate(request, username, password, **kwargs)
        except AxesBackendPermissionDenied:
            # DRF passes its own Request, which wraps the HttpRequest AxesMiddleware inspects.
            inner = getattr(request, "_request", None)
            if inner is not None:
                inner.axes_locked_out = True
            raise
        return None


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: the socket peer, or X-Forwarded-For set by RAG_PROXY_COUNT proxies."""
    peer = request.META.get("REMOTE_ADDR")
    count = settings.RAG_PROXY_COUNT
    if not count:
        return peer
    chain = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    chain = [hop for hop in chain if hop]
    # Each trusted proxy appends the address it saw; what a client wrote itself comes first.
    return chain[-count] if len(chain) >= count else peer


def lockout_response(request: HttpRequest, *_: object) -> HttpResponse:
    headers = {"Retry-After": str(int(settings.AXES_COOLOFF_TIME.total_seconds()))}
    if request.path.startswith("/api/") or "json" in request.headers.get("Accept", ""):
        return json_error(FailureCode.LOGIN_LOCKED, LOCKED_OUT, headers=headers)
    html = render_to_string("registration/locked_out.html", {"message": LOCKED_OUT})
    return HttpResponse(html, status=HTTP_STATUS[FailureCode.LOGIN_LOCKED], headers=headers)


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication whose failures count per client address, as password logins do:
    once RAG_LOGIN_FAILURE_LIMIT bad tokens came from an address within the cool-off window,
    further tokens from it are refused unread (429) until the window passes."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        key = f"token-failures:{client_ip(request._request) or 'unknown'}"
        limit, window = settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME
        if rate_count(key=key, window=window) >= limit:
            raise Throttled(detail="Too many failed token attempts; try again later.")
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            rate_take(key=key, amount=1, limit=limit, window=window)
            raise
