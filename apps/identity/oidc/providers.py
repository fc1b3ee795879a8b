"""The OpenID providers people may sign in with: the single one of RAG_OIDC_ISSUER, and the
further ones of RAG_OIDC_PROVIDERS (a JSON list), each with its own client and callback path.

The single provider (key `default`) keeps the paths it always had, /accounts/oidc/authenticate/
and /accounts/oidc/callback/, so a provider registered before several were possible goes on
working unchanged; a listed provider's paths carry its key: /accounts/oidc/<key>/callback/.
A listed provider's claims and scopes default to the RAG_OIDC_* values.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

DEFAULT_KEY = "default"
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_REQUIRED = ("key", "issuer", "client_id")
_KNOWN = {
    *_REQUIRED,
    "label",
    "client_secret",
    "scopes",
    "username_claim",
    "groups_claim",
    "groups_required",
    "sign_algo",
}


@dataclass(frozen=True)
class OidcProvider:
    key: str
    label: str
    issuer: str
    client_id: str
    client_secret: str
    scopes: str
    username_claim: str
    groups_claim: str
    groups_required: bool
    sign_algo: str

    @property
    def sign_in_path(self) -> str:
        if self.key == DEFAULT_KEY:
            return reverse("oidc_authentication_init")
        return reverse("oidc_provider_init", kwargs={"provider": self.key})

    @property
    def callback_path(self) -> str:
        if self.key == DEFAULT_KEY:
            return reverse("oidc_authentication_callback")
        return reverse("oidc_provider_callback", kwargs={"provider": self.key})


def _single() -> OidcProvider:
    return OidcProvider(
        key=DEFAULT_KEY,
        label=settings.RAG_OIDC_PROVIDER_NAME,
        issuer=settings.RAG_OIDC_ISSUER,
        client_id=settings.RAG_OIDC_CLIENT_ID,
        client_secret=settings.RAG_OIDC_CLIENT_SECRET or "",
        scopes=settings.RAG_OIDC_SCOPES,
        username_claim=settings.RAG_OIDC_USERNAME_CLAIM,
        groups_claim=settings.RAG_OIDC_GROUPS_CLAIM,
        groups_required=settings.RAG_OIDC_GROUPS_REQUIRED,
        sign_algo=settings.RAG_OIDC_SIGN_ALGO,
    )


def _listed(entry: Any, *, position: int) -> OidcProvider:
    where = f"RAG_OIDC_PROVIDERS[{position}]"
    if not isinstance(entry, dict):
        raise ImproperlyConfigured(f"{where} is not an object")
    if missing := [name for name in _REQUIRED if not entry.get(name)]:
        raise ImproperlyConfigured(f"{where} lacks {', '.join(missing)}")
    if unknown := sorted(set(entry) - _KNOWN):
        raise ImproperlyConfigured(f"{where} has unknown fields: {', '.join(unknown)}")
    key = str(entry["key"])
    if not _KEY.match(key) or key == DEFAULT_KEY:
        raise ImproperlyConfigured(
            f"{where}.key={key!r}: lower-case letters, digits and '-', not {DEFAULT_KEY!r}"
        )
    single = _single()
    return OidcProvider(
        key=key,
        label=str(entry.get("label") or key),
        issuer=str(entry["issuer"]),
        client_id=str(entry["client_id"]),
        client_secret=str(entry.get("client_secret", "")),
        scopes=str(entry.get("scopes", single.scopes)),
        username_claim=str(entry.get("username_claim", single.username_claim)),
        groups_claim=str(entry.get("groups_claim", single.groups_claim)),
        groups_required=bool(entry.get("groups_required", single.groups_required)),
        sign_algo=str(entry.get("sign_algo", single.sign_algo)),
    )


@cache
def _parsed(raw: str) -> tuple[Any, ...]:
    try:
        entries = json.loads(raw)
    except ValueError as error:
        raise ImproperlyConfigured(f"RAG_OIDC_PROVIDERS is not JSON: {error}") from None
    if not isinstance(entries, list):
        raise ImproperlyConfigured("RAG_OIDC_PROVIDERS is not a JSON list of providers")
    return tuple(entries)


def oidc_providers() -> tuple[OidcProvider, ...]:
    """Every configured provider, the single one first; read at each use, so a settings
    override in a test takes effect at once."""
    providers = [_single()] if settings.RAG_OIDC_ISSUER else []
    raw = settings.RAG_OIDC_PROVIDERS or ""
    entries = _parsed(raw) if raw.strip() else ()
    providers += [_listed(entry, position=n) for n, entry in enumerate(entries)]
    keys = [p.key for p in providers]
    if len(set(keys)) != len(keys):
        raise ImproperlyConfigured(f"RAG_OIDC_PROVIDERS repeats a key: {keys}")
    return tuple(providers)


def oidc_provider(key: str) -> OidcProvider | None:
    return next((p for p in oidc_providers() if p.key == key), None)
