"""Reads of sources: those a user may manage, the ones failing, a source by name."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet

from apps.corpus.access import collections_writable
from apps.sources.models import Source


def sources_manageable(*, user: AbstractBaseUser) -> QuerySet[Source]:
    """A source is managed by those who may write its collection (the collections' rule)."""
    return Source.objects.filter(collection__in=collections_writable(user=user))


def sources_failing() -> QuerySet[Source]:
    """Sources that failed RAG_SOURCE_FAILURES_SHOWN times in a row (the admin home shows them)."""
    return Source.objects.filter(failures_in_row__gte=settings.RAG_SOURCE_FAILURES_SHOWN)


def source_by_name(*, name: str) -> Source | None:
    return Source.objects.select_related("collection").filter(name=name).first()
