"""What each admin user sees of the corpus: collection managers and superusers everything,
editors only the collections they can write, their documents and their chunks."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from apps.corpus.access import collections_writable
from apps.corpus.models import Chunk, Collection, Document

MANAGE_PERMISSION = "corpus.change_collection"


def _writable(request: HttpRequest) -> QuerySet[Collection] | None:
    """The collections this admin user may touch; None means every collection."""
    user: Any = request.user
    if user.is_superuser and user.is_active:
        return None
    return collections_writable(user=user)


def collections_in_admin(request: HttpRequest, rows: QuerySet[Collection]) -> QuerySet[Collection]:
    # Whoever manages collections (sets their groups) must see them all to do it.
    if request.user.has_perm(MANAGE_PERMISSION):
        return rows
    writable = _writable(request)
    return rows if writable is None else rows.filter(pk__in=writable.values("pk"))


def documents_in_admin(request: HttpRequest, rows: QuerySet[Document]) -> QuerySet[Document]:
    writable = _writable(request)
    return rows if writable is None else rows.filter(collection__in=writable.values("pk"))


def chunks_in_admin(request: HttpRequest, rows: QuerySet[Chunk]) -> QuerySet[Chunk]:
    writable = _writable(request)
    return rows if writable is None else rows.filter(document__collection__in=writable.values("pk"))
