"""Replace a source's stored credentials as an operator would, to try wrong ones."""

from __future__ import annotations

from apps.sources.credentials import credentials_encrypt
from apps.sources.models import Source


def credentials_replace(source: Source, **values: str) -> None:
    token = credentials_encrypt(values=values)
    Source.objects.filter(pk=source.pk).update(credentials_encrypted=token)
