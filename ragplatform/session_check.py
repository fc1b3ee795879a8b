"""Who a stored session belongs to now, for connections that outlive one request.

A WebSocket authenticates once, at connect; this lets it ask again later, so logging out
(the session is flushed), a password change (the auth hash no longer matches) or a
deactivated account ends what the socket may do. Both reads need the database: when it
cannot be reached they say so (DatabaseUnreachable, the scope's DATABASE_UNREACHABLE), so
the socket is closed as unavailable and retried, not taken for a logout.
"""

from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace
from typing import Any

from channels.auth import AuthMiddleware
from channels.middleware import BaseMiddleware
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.conf import settings
from django.contrib.auth import get_user
from django.contrib.auth.models import AnonymousUser
from django.db import InterfaceError, OperationalError

from ragplatform.gates import user_signed_in

# What the database raises while it restarts: refused or dropped connections, a pool timeout
# (psycopg-pool's PoolTimeout is an OperationalError), a connection closed under us.
DATABASE_UNREACHABLE_ERRORS = (OperationalError, InterfaceError)
DATABASE_UNREACHABLE = "database_unreachable"  # the scope key set when the login could not be read
UNREACHABLE_MESSAGE = "The service cannot reach its database just now; reconnect to resume."


class DatabaseUnreachable(Exception):
    """The session store could not be read: nothing is known about the login."""


def session_user_id(*, session_key: str | None) -> int | None:
    """The active user the session still authenticates, re-read from the session store."""
    if not session_key:
        return None
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    try:
        # get_user only reads `.session`: the same checks as a request (backend, auth hash, active).
        user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]
    except DATABASE_UNREACHABLE_ERRORS as exc:
        raise DatabaseUnreachable(str(exc)) from exc
    return user.pk if user_signed_in(user) else None


class _SessionAuthMiddleware(AuthMiddleware):
    """channels' AuthMiddleware, but a session store that cannot be reached leaves an
    anonymous user and DATABASE_UNREACHABLE in the scope instead of failing the handshake."""

    async def resolve_scope(self, scope: dict[str, Any]) -> None:
        try:
            await super().resolve_scope(scope)
        except DATABASE_UNREACHABLE_ERRORS:
            # channels' lookup ran in database_sync_to_async, which already dropped the
            # thread's broken connection: the next socket connects afresh.
            scope["user"]._wrapped = AnonymousUser()
            scope[DATABASE_UNREACHABLE] = True


def socket_auth_stack(inner: Any) -> BaseMiddleware:
    """channels' AuthMiddlewareStack with the lookup above."""
    return CookieMiddleware(SessionMiddleware(_SessionAuthMiddleware(inner)))
