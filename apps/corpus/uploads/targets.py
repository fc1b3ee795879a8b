"""Which collection an upload may go into, for the admin upload page and the documents API.

Uploading needs `corpus.add_document`; adding to or replacing a document of a collection needs
write access to it (`access.collection_writable`); naming a collection one cannot read is
answered exactly like naming one that does not exist; and only superusers and holders of
`corpus.add_collection` may create one. A refused upload changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import F, Max, QuerySet

from apps.corpus.access import WRITE_PERMISSION, collection_writable, collections_readable
from apps.corpus.ingestion.services import collection_create
from apps.corpus.models import Collection
from apps.corpus.uploads.guard import UploadRefused
from ragplatform.errors import FailureCode

UPLOAD_PERMISSION = "corpus.add_document"
CREATE_PERMISSION = "corpus.add_collection"


def collection_for_upload(*, user: AbstractBaseUser | AnonymousUser, name: str) -> Collection:
    """The collection named `name` if `user` may upload into it, created if it does not exist
    and they may create it; else UploadRefused, before anything is written."""
    who: Any = user  # a user or AnonymousUser: both answer has_perm
    if not who.is_active or not who.has_perm(UPLOAD_PERMISSION):
        raise UploadRefused("You may not upload documents.", code=FailureCode.FORBIDDEN)
    found = collections_readable(user=user).filter(name=name).first()
    if found is not None:
        if not collection_writable(user=who, collection=found):
            message = f"You may not add or replace documents in collection {name!r}."
            raise UploadRefused(message, code=FailureCode.FORBIDDEN)
        return found
    if Collection.objects.filter(name=name).exists() or not who.has_perm(CREATE_PERMISSION):
        raise UploadRefused(f"No collection named {name!r}", code=FailureCode.NOT_FOUND)
    return _created(who, name)


def _created(user: Any, name: str) -> Collection:
    if getattr(user, "is_superuser", False):
        return collection_create(name=name)
    # Whoever creates a collection must be able to fill it: their groups become its writers.
    groups = list(user.groups.all())
    if not groups or not user.has_perm(WRITE_PERMISSION):
        message = (
            f"Collection {name!r} would not be writable by you: you need to be in a group "
            "and allowed to change documents. Ask an administrator to create it."
        )
        raise UploadRefused(message, code=FailureCode.FORBIDDEN)
    return collection_create(name=name, writer_groups=groups)


def collection_upload_default(*, collections: QuerySet[Collection]) -> Collection | None:
    """The collection the upload form offers first among `collections` (those the user may
    write): the one that most recently received a document, else the first by name."""
    latest = Max("documents__created_at")
    return (
        collections.annotate(latest_document=latest)
        .order_by(F("latest_document").desc(nulls_last=True), "name")
        .first()
    )
