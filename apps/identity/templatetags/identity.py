"""`{% sign_in_providers %}`: a "Sign in with <provider>" link per provider, on both login pages."""

from __future__ import annotations

from typing import Any

from django import template

from apps.identity.oidc.providers import oidc_providers

register = template.Library()


@register.inclusion_tag("identity/_sign_in_providers.html")
def sign_in_providers(next_url: str = "") -> dict[str, Any]:
    return {"providers": oidc_providers(), "next": next_url}
