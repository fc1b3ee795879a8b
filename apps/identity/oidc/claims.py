"""An OpenID provider's claims read into the account's fields and its directory groups."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.identity.oidc.providers import OidcProvider
from apps.identity.oidc.refusals import OidcRefusal, OidcRefused


@dataclass(frozen=True)
class Profile:
    username: str
    first_name: str
    last_name: str
    email: str


def claims_profile(claims: dict[str, Any], *, provider: OidcProvider) -> Profile:
    username = str(claims.get(provider.username_claim) or "").strip()
    if not username:
        raise OidcRefused(OidcRefusal.NO_USERNAME, f"no {provider.username_claim!r} claim")
    first, last = claims.get("given_name"), claims.get("family_name")
    if first is None and last is None and claims.get("name"):
        first, _, last = str(claims["name"]).partition(" ")
    return Profile(
        username=username[:150],
        first_name=str(first or "")[:150],
        last_name=str(last or "")[:150],
        email=str(claims.get("email") or "")[:254],
    )


def claims_groups(claims: dict[str, Any], *, provider: OidcProvider) -> list[str] | None:
    """The groups claim's names; None when groups are not read from the provider at all."""
    name = provider.groups_claim
    if not name:
        return None
    value = claims.get(name)
    if value is None:
        if provider.groups_required:
            raise OidcRefused(OidcRefusal.NO_GROUPS, f"no {name!r} claim")
        return []
    values = [value] if isinstance(value, str) else list(value)
    return [str(v) for v in values]
