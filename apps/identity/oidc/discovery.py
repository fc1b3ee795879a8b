"""The provider's endpoints from its issuer URL (OpenID Connect Discovery 1.0), cached a while.

The document must name the configured issuer exactly (Discovery section 4.3): one that names
another is refused, since its tokens would say that other issuer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import requests
from django.conf import settings

from apps.identity.oidc.refusals import OidcRefusal, OidcRefused

WELL_KNOWN = "/.well-known/openid-configuration"


@dataclass(frozen=True)
class ProviderEndpoints:
    issuer: str
    authorization: str
    token: str
    userinfo: str
    jwks: str
    end_session: str


_cache: dict[str, tuple[float, ProviderEndpoints]] = {}


def provider_endpoints(*, issuer: str) -> ProviderEndpoints:
    now = time.monotonic()
    cached = _cache.get(issuer)
    if cached is not None and now - cached[0] < settings.RAG_OIDC_DISCOVERY_CACHE_S:
        return cached[1]
    endpoints = _discover(issuer=issuer)
    _cache[issuer] = (now, endpoints)
    return endpoints


def discovery_forget() -> None:
    _cache.clear()


def _discover(*, issuer: str) -> ProviderEndpoints:
    url = issuer.rstrip("/") + WELL_KNOWN
    try:
        response = requests.get(url, timeout=settings.RAG_OIDC_TIMEOUT_S)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise OidcRefused(OidcRefusal.UNREACHABLE, f"discovery at {url}: {error}") from error
    if document.get("issuer") != issuer:
        raise OidcRefused(
            OidcRefusal.WRONG_ISSUER,
            f"discovery names issuer {document.get('issuer')!r}, configured {issuer!r}",
        )
    try:
        return ProviderEndpoints(
            issuer=issuer,
            authorization=document["authorization_endpoint"],
            token=document["token_endpoint"],
            userinfo=document["userinfo_endpoint"],
            jwks=document["jwks_uri"],
            end_session=document.get("end_session_endpoint", ""),
        )
    except KeyError as missing:
        raise OidcRefused(OidcRefusal.UNREACHABLE, f"discovery lacks {missing}") from None
