"""mozilla-django-oidc's settings from the platform's own (RAG_OIDC_*), read at each use.

The library reads `OIDC_*` names through a `get_settings` hook; the platform's views and
backend answer it from here, so the endpoints come from discovery and a settings override in
a test takes effect at once. Nothing here runs until a sign-in uses OpenID Connect: a
password sign-in never waits for the provider.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from mozilla_django_oidc.utils import absolutify, import_from_settings

from apps.identity.oidc.discovery import ProviderEndpoints, provider_endpoints

# Where the library keeps the ID token (OIDC_STORE_ID_TOKEN): a session key, not a secret.
ID_TOKEN_SESSION_KEY = "oidc_id_token"  # noqa: S105


def oidc_enabled() -> bool:
    return bool(settings.RAG_OIDC_ISSUER)


def oidc_endpoints() -> ProviderEndpoints:
    return provider_endpoints(issuer=settings.RAG_OIDC_ISSUER)


def _fixed() -> dict[str, Any]:
    return {
        "OIDC_RP_CLIENT_ID": settings.RAG_OIDC_CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": settings.RAG_OIDC_CLIENT_SECRET,
        "OIDC_RP_SIGN_ALGO": settings.RAG_OIDC_SIGN_ALGO,
        "OIDC_RP_SCOPES": settings.RAG_OIDC_SCOPES,
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


def library_setting(attr: str, *default: Any) -> Any:
    """The value of the library's setting `attr` (its `get_settings` hook)."""
    if attr in _DISCOVERED:
        return getattr(oidc_endpoints(), _DISCOVERED[attr])
    fixed = _fixed()
    if attr in fixed:
        return fixed[attr]
    return import_from_settings(attr, *default)


def provider_logout_url(request: HttpRequest) -> str:
    """The provider's end-session address for this session (RP-initiated logout 1.0), or ''
    when the session did not sign in with OpenID Connect or the provider offers none."""
    id_token = request.session.get(ID_TOKEN_SESSION_KEY)
    if not id_token or not oidc_enabled():
        return ""
    end_session = oidc_endpoints().end_session
    if not end_session:
        return ""
    query = {
        "id_token_hint": id_token,
        "client_id": settings.RAG_OIDC_CLIENT_ID,
        "post_logout_redirect_uri": absolutify(request, reverse("login")),
    }
    return f"{end_session}?{urlencode(query)}"
