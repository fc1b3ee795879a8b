"""Who a stored session belongs to now, for connections that outlive one request.

A WebSocket authenticates once, at connect; this lets it ask again later, so logging out
(the session is flushed), a password change (the auth hash no longer matches) or a
deactivated account ends what the socket may do.
"""

from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import get_user

from ragplatform.gates import user_signed_in


def session_user_id(*, session_key: str | None) -> int | None:
    """The active user the session still authenticates, re-read from the session store."""
    if not session_key:
        return None
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    # get_user only reads `.session`: the same checks as a request (backend, auth hash, active).
    user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]
    return user.pk if user_signed_in(user) else None
