"""Which collections a user may read and write: the one place that turns a user into them.

Placeholder until collection access lands (replaced by the access work): everything is
readable and only superusers write. The signatures are the shared contract; callers must not
rely on the placeholder's bodies.
"""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet

from apps.corpus.models import Collection


def collections_readable(*, user: AbstractBaseUser | AnonymousUser | None) -> QuerySet[Collection]:
    return Collection.objects.all()


def collection_ids_readable(
    *, user: AbstractBaseUser | AnonymousUser | None
) -> frozenset[int] | None:
    """None is unrestricted: the operator at the command line (user None) and superusers."""
    if user is None or getattr(user, "is_superuser", False):
        return None
    return frozenset(Collection.objects.values_list("pk", flat=True))


def collection_writable(*, user: AbstractBaseUser, collection: Collection) -> bool:
    return bool(getattr(user, "is_superuser", False))


def collections_writable(*, user: AbstractBaseUser) -> QuerySet[Collection]:
    if getattr(user, "is_superuser", False):
        return Collection.objects.all()
    return Collection.objects.none()
