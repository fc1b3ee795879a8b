"""API tokens for scripts (DRF's authtoken: `Authorization: Token <key>`), stored hashed.

The table holds `token_digest(key)`, a keyed hash (HMAC-SHA256 under RAG_API_TOKEN_HASH_KEY,
cut to the column's 40 hex characters, 160 bits), never the key: someone who reads the
database (a backup, a replica, the admin) cannot sign in with what they read. A key is shown
once, when it is made; `ThrottledTokenAuthentication` hashes what a script sends and looks the
digest up. Migration ragplatform 0003 hashed the keys stored before, so they keep working.
Changing RAG_API_TOKEN_HASH_KEY (or DJANGO_SECRET_KEY while it is unset) stops every token:
issue new ones with `manage.py api_token USER --rotate` (docs/guide/15-deployment.md).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

DIGEST_CHARS = 40  # Token.key's max_length


class UnknownUser(LookupError):
    """No account has that username."""


class TokenNotShown(LookupError):
    """The user has a token, and only its digest is stored: it cannot be shown again."""


@dataclass(frozen=True)
class IssuedToken:
    key: str  # shown once: only its digest is stored
    active: bool  # the account may sign in; a deactivated user's token is refused


def token_digest(key: str, *, hash_key: str | None = None) -> str:
    """What the table stores for `key` (the migration passes the hash key it read itself)."""
    secret = (hash_key if hash_key is not None else settings.RAG_API_TOKEN_HASH_KEY).encode()
    return hmac.new(secret, key.encode(), hashlib.sha256).hexdigest()[:DIGEST_CHARS]


def api_token_issue(*, username: str, rotate: bool = False) -> IssuedToken:
    """A new token for a user who has none; `rotate` replaces the user's token, so the old key
    stops working at once. TokenNotShown when the user has one and `rotate` is not set."""
    user_model = get_user_model()
    try:
        user = user_model._default_manager.get(**{user_model.USERNAME_FIELD: username})
    except user_model.DoesNotExist:
        raise UnknownUser(f"No user named {username!r}") from None
    key = Token.generate_key()
    with transaction.atomic():
        if rotate:
            Token.objects.filter(user=user).delete()
        elif Token.objects.filter(user=user).exists():
            raise TokenNotShown(
                f"{username} already has a token, which cannot be shown again (only its hash"
                " is kept); --rotate replaces it"
            )
        Token.objects.create(user=user, key=token_digest(key))
    return IssuedToken(key=key, active=user.is_active)
