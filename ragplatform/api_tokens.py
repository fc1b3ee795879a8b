"""API tokens for scripts (DRF's authtoken: `Authorization: Token <key>`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token


class UnknownUser(LookupError):
    """No account has that username."""


@dataclass(frozen=True)
class IssuedToken:
    key: str
    created: bool  # a new key; False means the user's existing key was returned
    active: bool  # the account may sign in; a deactivated user's token is refused


def api_token_issue(*, username: str, rotate: bool = False) -> IssuedToken:
    """The user's token, created if they have none; `rotate` replaces it with a new key, so the
    old one stops working at once."""
    user_model = get_user_model()
    try:
        user = user_model._default_manager.get(**{user_model.USERNAME_FIELD: username})
    except user_model.DoesNotExist:
        raise UnknownUser(f"No user named {username!r}") from None
    with transaction.atomic():
        if rotate:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
    return IssuedToken(key=token.key, created=created, active=user.is_active)
