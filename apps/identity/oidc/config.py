"""mozilla-django-oidc's settings from the platform's own (RAG_OIDC_*), read at each use.

The library reads `OIDC_*` names through a `get_settings` hook; the platform's views and
backend answer it from here for the provider of the sign-in at hand, so the endpoints come
from that provider's discovery and a settings override in a test takes effect at once.
Nothing here runs until a sign-in uses OpenID Connect: a password sign-in never waits for
the provider.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from mozilla_django_oidc.utils import absolutify, import_from_settings

from apps.identity.oidc.discovery import ProviderEndpoints, provider_endpoints
from apps.identity.oidc.providers import DEFAULT_KEY, OidcProvider, oidc_provider

# Where the library keeps the ID token (OIDC_STORE_ID_TOKEN): a session key, not a secret.
ID_TOKEN_SESSION_KEY = "oidc_id_token"  # noqa: S105
# Which provider the session signed in with (its key): the one its sign-out goes to.
PROVIDER_SESSION_KEY = "identity_oidc_provider"
# The request attribute by which the callback view tells the backend whose sign-in it is:
# the library's `authenticate()` call passes only the request, the nonce and the verifier.
_REQUEST_ATTRIBUTE = "identity_oidc_provider"


def request_provider_set(request: HttpRequest, provider: OidcProvider) -> None:
    setattr(request, _REQUEST_ATTRIBUTE, provider)


def request_provider(request: HttpRequest | None) -> OidcProvider | None:
    provider = getattr(request, _REQUEST_ATTRIBUTE, None)
    return provider if isinstance(provider, OidcProvider) else None


def oidc_endpoints(provider: OidcProvider) -> ProviderEndpoints:
    return provider_endpoints(issuer=provider.issuer)


def _fixed(provider: OidcProvider) -> dict[str, Any]:
    return {
        "OIDC_RP_CLIENT_ID": provider.client_id,
        "OIDC_RP_CLIENT_SECRET": provider.client_secret,
        "OIDC_RP_SIGN_ALGO": provider.sign_algo,
        "OIDC_RP_SCOPES": provider.scopes,
        "OIDC_USE_NONCE": True,
        "OIDC_USE_PKCE": True,
        "OIDC_PKCE_CODE_CHALLENGE_METHOD": "S256",
        "OIDC_STORE_ID_TOKEN": True,  # the id_token_hint of RP-initiated logout
        "OIDC_TIMEOUT": settings.RAG_OIDC_TIMEOUT_S,
        "OIDC_CREATE_USER": True,
        "OIDC_AUTHENTICATION_CALLBACK_URL": "oidc_authentication_callback",
    }


_DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization",
    "OIDC_OP_TOKEN_ENDPOINT": "token",
    "OIDC_OP_USER_ENDPOINT": "userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "jwks",
}


def library_setting(provider: OidcProvider, attr: str, *default: Any) -> Any:
    """The value of the library's setting `attr` (its `get_settings` hook) for `provider`."""
    if attr in _DISCOVERED:
        return getattr(oidc_endpoints(provider), _DISCOVERED[attr])
    fixed = _fixed(provider)
    if attr in fixed:
        return fixed[attr]
    return import_from_settings(attr, *default)


def provider_logout_url(request: HttpRequest) -> str:
    """The provider's end-session address for this session (RP-initiated logout 1.0), or ''
    when the session did not sign in with OpenID Connect or the provider offers none."""
    id_token = request.session.get(ID_TOKEN_SESSION_KEY)
    provider = session_provider(request)
    if not id_token or provider is None:
        return ""
    end_session = oidc_endpoints(provider).end_session
    if not end_session:
        return ""
    query = {
        "id_token_hint": id_token,
        "client_id": provider.client_id,
        "post_logout_redirect_uri": absolutify(request, reverse("login")),
    }
    return f"{end_session}?{urlencode(query)}"


def session_provider(request: HttpRequest) -> OidcProvider | None:
    """The provider this session signed in with, if it still is configured (a session from
    before several providers could be configured signed in with the single one)."""
    return oidc_provider(str(request.session.get(PROVIDER_SESSION_KEY) or DEFAULT_KEY))
