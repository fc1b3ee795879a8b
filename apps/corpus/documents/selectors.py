"""Reads of the corpus."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Q, QuerySet

from apps.corpus.models import Collection, Document, DocumentStatus


def documents_list(
    *, collection: Collection | None = None, collection_ids: frozenset[int] | None = None
) -> QuerySet[Document]:
    """Documents, optionally of one collection and only among `collection_ids` (None: all)."""
    documents = Document.objects.select_related("collection")
    if collection_ids is not None:
        documents = documents.filter(collection_id__in=collection_ids)
    return documents.filter(collection=collection) if collection else documents


class UnknownCollection(ValueError):
    """A filter named a collection that does not exist (the caller answers 400)."""


def collection_ids_resolve(
    *, names: Sequence[str], among: frozenset[int] | None = None
) -> tuple[int, ...]:
    """The ids of the named collections, looked up only `among` the given ids (None: all), so
    a collection the caller may not read gets the same answer as one that does not exist."""
    collections = Collection.objects.filter(name__in=names)
    if among is not None:
        collections = collections.filter(pk__in=among)
    found = dict(collections.values_list("name", "pk"))
    if missing := [n for n in names if n not in found]:
        raise UnknownCollection(f"No collection named {', '.join(map(repr, missing))}")
    return tuple(found[n] for n in names)


def documents_waiting(*, documents: QuerySet[Document]) -> int:
    """How many of `documents` are queued and not yet taken by a worker."""
    waiting = Q(queued_at__isnull=False) | Q(status=DocumentStatus.PENDING)
    return documents.filter(waiting).exclude(status=DocumentStatus.PROCESSING).count()
