"""Writes of the identity audit: one row per sign-in, refusal, group change or deactivation."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest
from django.utils import timezone

from apps.identity.models import IdentityEvent
from apps.identity.vocabulary import EventKind, Source
from ragplatform.login_throttle import client_ip

_DETAIL_CHARS = 500


def identity_event_record(
    *,
    kind: EventKind,
    source: Source | None = None,
    provider: str = "",
    user: AbstractBaseUser | None = None,
    username: str = "",
    request: HttpRequest | None = None,
    detail: str = "",
) -> IdentityEvent:
    return IdentityEvent.objects.create(
        kind=kind,
        source=source or "",
        provider=provider[:200],
        user_id=user.pk if user is not None else None,
        username=(username or (user.get_username() if user is not None else ""))[:150],
        address=(client_ip(request) or None) if request is not None else None,
        detail=detail[:_DETAIL_CHARS],
    )


def identity_events_purge(*, days: int) -> int:
    """Drop audit rows older than `days` (RAG_IDENTITY_AUDIT_DAYS); returns how many."""
    cutoff = timezone.now() - timedelta(days=days)
    deleted, _ = IdentityEvent.objects.filter(at__lt=cutoff).delete()
    return deleted
