"""Login throttling with django-axes, per (client address, account name), with a back-off.

Every login that goes through `authenticate(request, ...)` is counted: the chat login, the
admin login and API Basic auth (development only). After RAG_LOGIN_FAILURE_LIMIT failures of
one account from one address, that account is refused from that address with 429, even with
the right password, for RAG_LOGIN_COOLOFF_MINUTES; each failure after a lockout has passed
doubles the next, up to RAG_LOGIN_COOLOFF_MAX_MINUTES. Counting the pair, not either alone,
is the point: someone who knows an account name cannot lock it out from everywhere, and one
address (a stale script behind an office's NAT) cannot lock out everyone behind it. A
successful login clears the failures of its address and account.

API tokens count apart (ThrottledTokenAuthentication): per address and token, so only the
bad token itself is refused; a request with no token or a valid one never is.
"""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta
from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_credentials, get_failure_limit
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request

from ragplatform.api_tokens import token_digest
from ragplatform.errors import HTTP_STATUS, FailureCode, json_error
from ragplatform.rate_limits import rate_count, rate_take

LOCKED_OUT = "Too many failed logins; try again in a few minutes."
KEY_REFUSED = "Too many failed attempts with this token; try again later."
# Doubling past this many extra failures already exceeds any sensible longest lockout.
_MAX_DOUBLINGS = 30


def login_lockout(*, failures: int, limit: int) -> timedelta:
    """How long `failures` of one account from one address lock it out from there (none below
    `limit`): RAG_LOGIN_COOLOFF at the limit, doubled by each failure past it, at most
    AXES_COOLOFF_TIME (RAG_LOGIN_COOLOFF_MAX_MINUTES)."""
    if failures < limit:
        return timedelta(0)
    doubled = settings.RAG_LOGIN_COOLOFF * 2 ** min(failures - limit, _MAX_DOUBLINGS)
    longest: timedelta = settings.AXES_COOLOFF_TIME
    return min(doubled, longest)


class BackoffDatabaseHandler(AxesDatabaseHandler):
    """Axes' database handler, locked while the back-off of `login_lockout` runs from the
    pair's last failure (axes alone locks for one fixed time)."""

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        if not getattr(settings, "AXES_LOCK_OUT_AT_FAILURE", True):  # axes' own default
            return False
        return self.lockout_remaining(request, credentials) > timedelta(0)

    def lockout_remaining(
        self, request: HttpRequest, credentials: dict[str, Any] | None = None
    ) -> timedelta:
        """How long this request's account stays locked out from its address (0: not)."""
        limit = get_failure_limit(request, credentials)
        now = getattr(request, "axes_attempt_time", None) or timezone.now()
        remaining = timedelta(0)
        # One queryset per lockout parameter (here one: the address and account together).
        for attempts in self.get_user_attempts(request, credentials):
            rows = list(attempts.values_list("failures_since_start", "attempt_time"))
            if not rows:
                continue
            failures, last = sum(r[0] for r in rows), max(r[1] for r in rows)
            lockout = login_lockout(failures=failures, limit=limit)
            remaining = max(remaining, last + lockout - now)
        return remaining


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
                AxesProxyHandler.update_request(inner)  # for the lockout's Retry-After
                inner.axes_locked_out = True
                inner.axes_credentials = get_credentials(username, **kwargs)
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


def lockout_response(
    request: HttpRequest, _response: object = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    headers = {"Retry-After": str(_retry_after_s(request, credentials))}
    if request.path.startswith("/api/") or "json" in request.headers.get("Accept", ""):
        return json_error(FailureCode.LOGIN_LOCKED, LOCKED_OUT, headers=headers)
    html = render_to_string("registration/locked_out.html", {"message": LOCKED_OUT})
    return HttpResponse(html, status=HTTP_STATUS[FailureCode.LOGIN_LOCKED], headers=headers)


def _retry_after_s(request: HttpRequest, credentials: dict[str, Any] | None) -> int:
    handler = AxesProxyHandler.get_implementation()
    remaining: timedelta = settings.RAG_LOGIN_COOLOFF
    # A request axes has not seen (a lockout raised elsewhere) has no failures to read.
    if isinstance(handler, BackoffDatabaseHandler) and getattr(request, "axes_updated", False):
        remaining = handler.lockout_remaining(request, credentials) or remaining
    return max(1, math.ceil(remaining.total_seconds()))


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication whose failures count per client address and token: once one token
    failed RAG_TOKEN_FAILURE_LIMIT times from an address within RAG_TOKEN_COOLOFF_MINUTES, it
    is refused unread (429) from there until the window passes. Tokens are long random keys,
    so there is nothing to gain by guessing (every guess is a new token), and a stale script
    must not stop the valid tokens, sessions and anonymous requests behind the same address."""

    address = "unknown"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        # DRF makes a new authenticator per request: the address is this request's.
        self.address = client_ip(request._request) or "unknown"
        return super().authenticate(request)  # None without an `Authorization: Token` header

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]  # the key itself is not stored
        counter = f"token-failures:{self.address}:{digest}"
        limit = settings.RAG_TOKEN_FAILURE_LIMIT
        window = timedelta(minutes=settings.RAG_TOKEN_COOLOFF_MINUTES)
        if rate_count(key=counter, window=window) >= limit:
            raise Throttled(detail=KEY_REFUSED)
        stored = token_digest(key)  # the table holds digests (api_tokens.py)
        try:
            return super().authenticate_credentials(stored)
        except AuthenticationFailed:
            if not self.get_model()._default_manager.filter(key=stored).exists():
                # An unknown key; a deactivated user's is refused but not counted, so it works
                # again as soon as the account does.
                rate_take(key=counter, amount=1, limit=limit, window=window)
            raise
