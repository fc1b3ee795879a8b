"""`{% sign_in_providers %}`: the "Sign in with <provider>" link of both login pages."""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings

register = template.Library()


@register.inclusion_tag("identity/_sign_in_providers.html")
def sign_in_providers(next_url: str = "") -> dict[str, Any]:
    return {
        "enabled": bool(settings.RAG_OIDC_ISSUER),
        "provider": settings.RAG_OIDC_PROVIDER_NAME,
        "next": next_url,
    }
