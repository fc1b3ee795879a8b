"""What a JSON view checks before it works, answered in the platform's error body.

`user_signed_in` is the one decision of "signed in" for every transport: these gates, the
chat socket (at connect) and the stored-session re-check (`session_check`). The decorators
take `def` and `async def` views alike and return a view of the same kind, so an async view
is never run through a thread to be gated.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from inspect import iscoroutinefunction
from typing import Any, TypeVar, cast

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from ragplatform.errors import FailureCode, json_error

View = TypeVar("View", bound=Callable[..., Any])


def user_signed_in(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """A real, active account (a deactivated one is signed out wherever it still has a session)."""
    return bool(user is not None and user.is_authenticated and user.is_active)


def signed_in_user_id(request: HttpRequest) -> int:
    """The user's id in a view behind `signed_in_required` (sync views: `request.user`)."""
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise TypeError("signed_in_user_id needs a view behind signed_in_required")
    return user_id


def wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def signed_in_required(view: View) -> View:
    """Signed-in users only, else 401 `unauthenticated`."""
    return _signed_in_gate(view, browsers_to_login=False)


def signed_in_required_or_login(view: View) -> View:
    """The same for a view a plain form also posts to: a request that does not ask for JSON
    is sent to the login page instead, so the page works without JavaScript."""
    return _signed_in_gate(view, browsers_to_login=True)


def _signed_in_gate(view: View, *, browsers_to_login: bool) -> View:
    def refusal(request: HttpRequest) -> HttpResponse:
        if browsers_to_login and not wants_json(request):
            return redirect_to_login(request.get_full_path())
        return json_error(FailureCode.UNAUTHENTICATED, _("Log in first"))

    if iscoroutinefunction(view):

        @wraps(view)
        async def gated_async(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if not user_signed_in(await request.auser()):
                return refusal(request)
            return await view(request, *args, **kwargs)

        return cast(View, gated_async)

    @wraps(view)
    def gated(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not user_signed_in(request.user):
            return refusal(request)
        return view(request, *args, **kwargs)

    return cast(View, gated)


def methods_allowed(*methods: str) -> Callable[[View], View]:
    """Django's `require_http_methods`, answering 405 `method_not_allowed` with an Allow header."""
    allowed = sorted({m.upper() for m in methods})

    def refusal(request: HttpRequest) -> HttpResponse | None:
        if request.method in allowed:
            return None
        message = _("Use %(methods)s") % {"methods": " or ".join(allowed)}
        headers = {"Allow": ", ".join(allowed)}
        return json_error(FailureCode.METHOD_NOT_ALLOWED, message, headers=headers)

    def decorate(view: View) -> View:
        if iscoroutinefunction(view):

            @wraps(view)
            async def gated_async(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                refused = refusal(request)
                return refused if refused is not None else await view(request, *args, **kwargs)

            return cast(View, gated_async)

        @wraps(view)
        def gated(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            refused = refusal(request)
            return refused if refused is not None else view(request, *args, **kwargs)

        return cast(View, gated)

    return decorate
