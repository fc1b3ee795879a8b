"""What RAG_ENV=production refuses: settings that would make a public deployment unsafe.

Each check raises ImproperlyConfigured naming the environment variable to fix, so a
misconfigured server stops at start-up instead of running open.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ImproperlyConfigured

MIN_SECRET_KEY_LENGTH = 50
MIN_SECRET_KEY_UNIQUE_CHARACTERS = 5
# What `startproject` writes; a key starting like this was copied from a template.
INSECURE_KEY_PREFIX = "django-insecure"


def production_settings_check(
    *, debug: bool, secret_key: str, allowed_hosts: Sequence[str]
) -> None:
    if debug:
        raise ImproperlyConfigured("DJANGO_DEBUG must be off when RAG_ENV=production")
    secret_key_check(secret_key)
    if not allowed_hosts:
        raise ImproperlyConfigured(
            "DJANGO_ALLOWED_HOSTS must name the host names the site is served as "
            "when RAG_ENV=production"
        )
    if any(host.strip() in {"*", ".*"} for host in allowed_hosts):
        # The WebSocket origin check trusts ALLOWED_HOSTS, so "*" would admit any page.
        raise ImproperlyConfigured(
            'DJANGO_ALLOWED_HOSTS must not contain "*" when RAG_ENV=production'
        )


def secret_key_check(secret_key: str) -> None:
    if secret_key.startswith(INSECURE_KEY_PREFIX):
        raise ImproperlyConfigured(
            f'DJANGO_SECRET_KEY starts with "{INSECURE_KEY_PREFIX}": generate a new one'
        )
    if (
        len(secret_key) < MIN_SECRET_KEY_LENGTH
        or len(set(secret_key)) < MIN_SECRET_KEY_UNIQUE_CHARACTERS
    ):
        raise ImproperlyConfigured(
            f"DJANGO_SECRET_KEY is too weak: use at least {MIN_SECRET_KEY_LENGTH} random "
            f"characters (at least {MIN_SECRET_KEY_UNIQUE_CHARACTERS} different ones)"
        )
