"""Credentials of a source, kept encrypted with a key from the settings (Fernet).

The key is RAG_SOURCE_CREDENTIALS_KEY, or one derived from DJANGO_SECRET_KEY when it is not set
(so a development machine needs nothing); changing the key makes the stored credentials
unreadable, and a sync then fails with a message saying to enter them again.
"""

from __future__ import annotations

import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


class CredentialsUnreadable(Exception):
    """The stored credentials were encrypted with another key."""


def _fernet() -> Fernet:
    key = settings.RAG_SOURCE_CREDENTIALS_KEY
    if key:
        # Any text works: a Fernet key is derived from it, so operators need not make one.
        raw = hashlib.sha256(key.encode("utf-8")).digest()
    else:
        raw = hashlib.sha256(b"ragplatform-sources:" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(raw))


def credentials_encrypt(*, values: dict[str, str]) -> str:
    """The token to store; an empty mapping stores nothing."""
    if not values:
        return ""
    return _fernet().encrypt(json.dumps(values).encode("utf-8")).decode("ascii")


def credentials_decrypt(*, token: str) -> dict[str, str]:
    if not token:
        return {}
    try:
        values = json.loads(_fernet().decrypt(token.encode("ascii")))
    except InvalidToken as exc:
        raise CredentialsUnreadable(
            "The stored credentials cannot be read with the current key; enter them again."
        ) from exc
    return {str(k): str(v) for k, v in values.items()}


def credentials_parse(*, text: str) -> dict[str, str]:
    """Credentials typed as `name=value` lines (the admin form, a prompt) or one JSON object."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        loaded = json.loads(text)
        if not isinstance(loaded, dict):
            raise ValueError("Credentials must be a JSON object or name=value lines.")
        return {str(k): str(v) for k, v in loaded.items()}
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise ValueError("Each line of the credentials must be name=value.")
        values[name.strip()] = value.strip()
    return values
