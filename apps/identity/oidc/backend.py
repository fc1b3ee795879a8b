"""The OpenID Connect backend: mozilla-django-oidc's code flow, with the checks it leaves out.

The library exchanges the code (with the PKCE verifier), checks the state (in the callback
view) and the nonce; this subclass also checks the ID token's issuer, audience and expiry
(with RAG_OIDC_CLOCK_SKEW_S of leeway), finds the account by its subject, creates it on the
first sign-in (just in time) and applies the groups claim at every sign-in. Every value comes
from the provider the callback view named on the request (several may be configured).
"""

from __future__ import annotations

from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation
from django.db.models import QuerySet
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import absolutify

from apps.identity.oidc.claims import claims_groups, claims_profile
from apps.identity.oidc.config import library_setting, oidc_endpoints, request_provider
from apps.identity.oidc.providers import OidcProvider
from apps.identity.oidc.refusals import OidcRefusal, OidcRefused
from apps.identity.oidc.services import oidc_account_create, oidc_account_update
from apps.identity.vocabulary import Source

_TOKEN_ERRORS: tuple[tuple[type[Exception], OidcRefusal], ...] = (
    (jwt.ExpiredSignatureError, OidcRefusal.EXPIRED),
    (jwt.InvalidIssuerError, OidcRefusal.WRONG_ISSUER),
    (jwt.InvalidAudienceError, OidcRefusal.WRONG_AUDIENCE),
    (jwt.InvalidTokenError, OidcRefusal.BAD_SIGNATURE),
)


def _library_refusal(error: SuspiciousOperation) -> OidcRefused:
    text = str(error)
    reason = OidcRefusal.NONCE if "Nonce" in text else OidcRefusal.BAD_SIGNATURE
    return OidcRefused(reason, text)


class OidcBackend(OIDCAuthenticationBackend):
    identity_source = Source.OIDC
    # The endpoints are discovered on first use, not when Django builds its backends.
    OIDC_RP_IDP_SIGN_KEY = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()

    @staticmethod
    def identity_provider(request: HttpRequest | None) -> str:
        provider = request_provider(request)
        return provider.label if provider is not None else ""

    def get_settings(self, attr: str, *args: Any) -> Any:
        return library_setting(self.provider, attr, *args)

    OIDC_OP_TOKEN_ENDPOINT = property(lambda self: oidc_endpoints(self.provider).token)
    OIDC_OP_USER_ENDPOINT = property(lambda self: oidc_endpoints(self.provider).userinfo)
    OIDC_OP_JWKS_ENDPOINT = property(lambda self: oidc_endpoints(self.provider).jwks)
    OIDC_RP_CLIENT_ID = property(lambda self: self.provider.client_id)
    OIDC_RP_CLIENT_SECRET = property(lambda self: self.provider.client_secret)
    OIDC_RP_SIGN_ALGO = property(lambda self: self.provider.sign_algo)

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        # Only the callback passes a nonce and names its provider: a password form never
        # reaches this far.
        provider = request_provider(request)
        if request is None or "nonce" not in kwargs or provider is None:
            return None
        self.provider: OidcProvider = provider
        try:
            user: User | None = super().authenticate(request, **kwargs)
        except SuspiciousOperation as error:
            raise _library_refusal(error) from error
        except requests.RequestException as error:
            raise OidcRefused(OidcRefusal.PROVIDER_ERROR, str(error)[:400]) from error
        return user

    def get_token(self, payload: dict[str, Any]) -> dict[str, Any]:
        # The library sends the single provider's callback address; the code was issued to
        # this provider's own, and the token endpoint checks that they are the same.
        payload = {**payload, "redirect_uri": absolutify(self.request, self.provider.callback_path)}
        token: dict[str, Any] = super().get_token(payload)
        return token

    def get_user(self, user_id: int) -> User | None:
        # The library's get_user admits a deactivated account's session; the others do not.
        user: User | None = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    def get_payload_data(self, token: bytes | str, key: Any) -> dict[str, Any]:
        try:
            payload: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[self.provider.sign_algo],
                audience=self.provider.client_id,
                issuer=self.provider.issuer,
                leeway=settings.RAG_OIDC_CLOCK_SKEW_S,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.InvalidTokenError as error:
            reason = next(r for kind, r in _TOKEN_ERRORS if isinstance(error, kind))
            raise OidcRefused(reason, f"ID token: {error}") from error
        return payload

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        claims_groups(
            claims, provider=self.provider
        )  # refuses a missing groups claim before any account is made
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        return self.UserModel.objects.filter(
            external_identities__source=Source.OIDC,
            external_identities__issuer=self.provider.issuer,
            external_identities__subject=str(claims.get("sub", "")),
        )

    def create_user(self, claims: dict[str, Any]) -> User:
        return oidc_account_create(
            provider=self.provider,
            subject=str(claims["sub"]),
            profile=claims_profile(claims, provider=self.provider),
            groups=claims_groups(claims, provider=self.provider),
            request=self.request,
        )

    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        if not user.is_active:
            raise OidcRefused(OidcRefusal.INACTIVE, f"{user.get_username()} is deactivated")
        return oidc_account_update(
            provider=self.provider,
            user=user,
            profile=claims_profile(claims, provider=self.provider),
            groups=claims_groups(claims, provider=self.provider),
            request=self.request,
        )
