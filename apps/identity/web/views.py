"""Sign-in and sign-out views: the OpenID Connect redirect and callback, and the one sign-out.

They gate and hand over: the library does the code flow, `oidc/` the checks, the audit its
writes. A refused sign-in is the login page again with the reason (HTTP 400), never a 500.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from apps.identity.audit.services import identity_event_record
from apps.identity.oidc.config import (
    library_setting,
    oidc_enabled,
    oidc_endpoints,
    provider_logout_url,
)
from apps.identity.oidc.refusals import OidcRefusal, OidcRefused
from apps.identity.signin.forms import SignInForm
from apps.identity.vocabulary import EventKind, Source


def _refused(request: HttpRequest, refused: OidcRefused) -> HttpResponse:
    identity_event_record(
        kind=EventKind.SIGN_IN_FAILED,
        source=Source.OIDC,
        provider=settings.RAG_OIDC_PROVIDER_NAME,
        request=request,
        detail=refused.detail,
    )
    context = {"form": SignInForm(request), "identity_refusal": refused.reason.label}
    return render(request, "registration/login.html", context, status=400)


class OidcSignInView(OIDCAuthenticationRequestView):
    """Redirects to the provider with state, nonce and the PKCE challenge."""

    OIDC_OP_AUTH_ENDPOINT = property(lambda self: oidc_endpoints().authorization)
    OIDC_RP_CLIENT_ID = property(lambda self: settings.RAG_OIDC_CLIENT_ID)

    def __init__(self, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return library_setting(attr, *args)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc_enabled():
            return _refused(request, OidcRefused(OidcRefusal.UNREACHABLE, "RAG_OIDC_ISSUER unset"))
        try:
            response: HttpResponse = super().get(request)
        except OidcRefused as refused:
            return _refused(request, refused)
        return response


class OidcCallbackView(OIDCAuthenticationCallbackView):
    """The provider's redirect back: state checked here, the rest by `OidcBackend`."""

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return library_setting(attr, *args)

    def get(self, request: HttpRequest) -> HttpResponse:
        if error := request.GET.get("error"):
            detail = f"{error}: {request.GET.get('error_description', '')}"
            return _refused(request, OidcRefused(OidcRefusal.PROVIDER_ERROR, detail))
        state = request.GET.get("state", "")
        if state not in request.session.get("oidc_states", {}):
            return _refused(request, OidcRefused(OidcRefusal.STATE, "state not in session"))
        try:
            response: HttpResponse = super().get(request)
        except OidcRefused as refused:
            return _refused(request, refused)
        return response

    def login_failure(self) -> HttpResponse:
        return _refused(self.request, OidcRefused(OidcRefusal.PROVIDER_ERROR, "no account"))


class SignOutView(auth_views.LogoutView):
    """Signs out here, then at the provider too when the session came from it.

    The way on to the provider is a page that goes there, not a redirect: the pages'
    Content-Security-Policy (form-action 'self') stops a form's redirect to another site."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        provider_logout = provider_logout_url(request) if oidc_enabled() else ""
        response = super().post(request, *args, **kwargs)
        if not provider_logout:
            return response
        context = {"url": provider_logout, "provider": settings.RAG_OIDC_PROVIDER_NAME}
        return render(request, "identity/provider_sign_out.html", context)
