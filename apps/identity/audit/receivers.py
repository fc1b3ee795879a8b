"""Django's sign-in signals into the identity audit, whichever backend or login page was used.

Each of the platform's backends names its source (`identity_source`) and provider
(`identity_provider(request)`: OpenID Connect's depends on the sign-in at hand); a backend
that names none signed in with a local password.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.http import HttpRequest
from django.utils.module_loading import import_string

from apps.identity.audit.services import identity_event_record
from apps.identity.vocabulary import EventKind, Source


def _backend_source(backend_path: str | None, request: HttpRequest) -> tuple[Source, str]:
    if not backend_path:
        return Source.PASSWORD, ""
    backend = import_string(backend_path)
    source = getattr(backend, "identity_source", Source.PASSWORD)
    provider = getattr(backend, "identity_provider", lambda request: "")(request)
    return source, provider


def _signed_in(sender: Any, request: HttpRequest, user: AbstractBaseUser, **_: Any) -> None:
    path = getattr(user, "backend", None) or request.session.get(BACKEND_SESSION_KEY)
    source, provider = _backend_source(path, request)
    identity_event_record(
        kind=EventKind.SIGN_IN, source=source, provider=provider, user=user, request=request
    )


def _signed_out(sender: Any, request: HttpRequest, user: AbstractBaseUser | None, **_: Any) -> None:
    if user is not None:
        identity_event_record(kind=EventKind.SIGN_OUT, user=user, request=request)


def _refused(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    # The password login: OpenID refusals are recorded by the callback with their reason.
    identity_event_record(
        kind=EventKind.SIGN_IN_FAILED,
        username=str(credentials.get("username", "")),
        request=request,
        detail=str(getattr(request, "identity_refusal", "") or "wrong user name or password"),
    )


def receivers_connect() -> None:
    user_logged_in.connect(_signed_in, dispatch_uid="identity-signed-in")
    user_logged_out.connect(_signed_out, dispatch_uid="identity-signed-out")
    user_login_failed.connect(_refused, dispatch_uid="identity-refused")
