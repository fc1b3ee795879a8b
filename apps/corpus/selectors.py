"""Reads of the corpus."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet

from apps.corpus.models import Collection, Document


def documents_list(*, collection: Collection | None = None) -> QuerySet[Document]:
    documents = Document.objects.select_related("collection")
    return documents.filter(collection=collection) if collection else documents


class UnknownCollection(ValueError):
    """A filter named a collection that does not exist (the caller answers 400)."""


def collection_ids_resolve(*, names: Sequence[str]) -> tuple[int, ...]:
    found = dict(Collection.objects.filter(name__in=names).values_list("name", "pk"))
    if missing := [n for n in names if n not in found]:
        raise UnknownCollection(f"No collection named {', '.join(map(repr, missing))}")
    return tuple(found[n] for n in names)
