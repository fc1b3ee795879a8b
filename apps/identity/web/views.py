"""Sign-in and sign-out views: the OpenID Connect redirect and callback, and the one sign-out.

They gate and hand over: the library does the code flow, `oidc/` the checks, the audit its
writes. A refused sign-in is the login page again with the reason (HTTP 400), never a 500.
Each configured provider has its own pair of paths; the provider is found from the path.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from mozilla_django_oidc.utils import absolutify
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from apps.identity.audit.services import identity_event_record
from apps.identity.oidc.config import (
    PROVIDER_SESSION_KEY,
    library_setting,
    oidc_endpoints,
    provider_logout_url,
    request_provider_set,
    session_provider,
)
from apps.identity.oidc.providers import DEFAULT_KEY, OidcProvider, oidc_provider
from apps.identity.oidc.refusals import OidcRefusal, OidcRefused
from apps.identity.oidc.states import state_bind, state_check
from apps.identity.signin.forms import SignInForm
from apps.identity.vocabulary import EventKind, Source


def _refused(request: HttpRequest, refused: OidcRefused, *, provider: str = "") -> HttpResponse:
    identity_event_record(
        kind=EventKind.SIGN_IN_FAILED,
        source=Source.OIDC,
        provider=provider,
        request=request,
        detail=refused.detail,
    )
    context = {"form": SignInForm(request), "identity_refusal": refused.reason.label}
    return render(request, "registration/login.html", context, status=400)


def _provider(key: str) -> OidcProvider:
    provider = oidc_provider(key)
    if provider is None:
        raise OidcRefused(OidcRefusal.NOT_CONFIGURED, f"no OpenID provider {key!r}")
    return provider


class _ForOneProvider:
    """The library's settings hook, answered for the provider this request's path names."""

    provider: OidcProvider

    def get_settings(self, attr: str, *args: Any) -> Any:
        return library_setting(self.provider, attr, *args)

    def refused(self, request: HttpRequest, refused: OidcRefused, *, key: str) -> HttpResponse:
        provider = getattr(self, "provider", None)  # unset when the path names no provider
        return _refused(request, refused, provider=provider.label if provider else key)


class OidcSignInView(_ForOneProvider, OIDCAuthenticationRequestView):
    """Redirects to the provider with state, nonce and the PKCE challenge."""

    OIDC_OP_AUTH_ENDPOINT = property(lambda self: oidc_endpoints(self.provider).authorization)
    OIDC_RP_CLIENT_ID = property(lambda self: self.provider.client_id)

    def __init__(self, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)

    def get(self, request: HttpRequest, provider: str = DEFAULT_KEY) -> HttpResponse:
        try:
            self.provider = _provider(provider)
            response: HttpResponse = super().get(request)
        except OidcRefused as refused:
            return self.refused(request, refused, key=provider)
        state = parse_qs(urlsplit(response["Location"]).query)["state"][0]
        state_bind(request=request, state=state, provider=self.provider)
        return response

    def get_extra_params(self, request: HttpRequest) -> dict[str, str]:
        # The library would send the single provider's callback address.
        extra: dict[str, str] = super().get_extra_params(request)
        return {**extra, "redirect_uri": absolutify(request, self.provider.callback_path)}


class OidcCallbackView(_ForOneProvider, OIDCAuthenticationCallbackView):
    """The provider's redirect back: state (and its provider) checked here, the rest by
    `OidcBackend`."""

    def get(self, request: HttpRequest, provider: str = DEFAULT_KEY) -> HttpResponse:
        try:
            self.provider = _provider(provider)
            if error := request.GET.get("error"):
                detail = f"{error}: {request.GET.get('error_description', '')}"
                raise OidcRefused(OidcRefusal.PROVIDER_ERROR, detail)
            state_check(request=request, provider=self.provider)
            request_provider_set(request, self.provider)
            response: HttpResponse = super().get(request)
        except OidcRefused as refused:
            return self.refused(request, refused, key=provider)
        return response

    def login_success(self) -> HttpResponse:
        response: HttpResponse = super().login_success()
        self.request.session[PROVIDER_SESSION_KEY] = self.provider.key
        return response

    def login_failure(self) -> HttpResponse:
        refused = OidcRefused(OidcRefusal.PROVIDER_ERROR, "no account")
        return _refused(self.request, refused, provider=self.provider.label)


class SignOutView(auth_views.LogoutView):
    """Signs out here, then at the provider too when the session came from it.

    The way on to the provider is a page that goes there, not a redirect: the pages'
    Content-Security-Policy (form-action 'self') stops a form's redirect to another site."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        provider = session_provider(request)
        provider_logout = provider_logout_url(request)
        response = super().post(request, *args, **kwargs)
        if not provider_logout or provider is None:
            return response
        context = {"url": provider_logout, "provider": provider.label}
        return render(request, "identity/provider_sign_out.html", context)
