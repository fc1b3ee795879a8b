"""Who may read and write which collections: the one place a user becomes collection ids.

A collection is readable by every signed-in user when it is public, else by the members of its
reader or writer groups; writable by members of its writer groups who also hold
`corpus.change_document`. Superusers read and write everything; an inactive or anonymous user
reads nothing. `None` as the user is the operator at the command line, who reads everything.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet

from apps.corpus.models import Collection
from ragplatform.gates import user_signed_in

WRITE_PERMISSION = "corpus.change_document"
Reader = AbstractBaseUser | AnonymousUser | None


def _unrestricted(user: Reader) -> bool:
    return user is None or (user_signed_in(user) and bool(getattr(user, "is_superuser", False)))


def collections_readable(*, user: Reader) -> QuerySet[Collection]:
    if _unrestricted(user):
        return Collection.objects.all()
    if user is None or not user_signed_in(user):
        return Collection.objects.none()
    groups = Q(reader_groups__user=user.pk) | Q(writer_groups__user=user.pk)
    readable = Collection.objects.filter(groups).values("pk")
    # A sub-select, not a join: a user in two of a collection's groups sees it once.
    return Collection.objects.filter(Q(public=True) | Q(pk__in=readable))


def collection_ids_readable(*, user: Reader) -> frozenset[int] | None:
    """The ids of the collections `user` may read; None means every collection (the operator
    at the command line and superusers), so callers can skip the filter altogether."""
    if _unrestricted(user):
        return None
    return frozenset(collections_readable(user=user).values_list("pk", flat=True))


def collections_writable(*, user: AbstractBaseUser) -> QuerySet[Collection]:
    if _unrestricted(user):
        return Collection.objects.all()
    if not user_signed_in(user) or not user.has_perm(WRITE_PERMISSION):  # type: ignore[attr-defined]
        return Collection.objects.none()
    writable = Collection.objects.filter(writer_groups__user=user.pk).values("pk")
    return Collection.objects.filter(pk__in=writable)


def collection_writable(*, user: AbstractBaseUser, collection: Collection) -> bool:
    return collections_writable(user=user).filter(pk=collection.pk).exists()


def user_collection_ids_readable(*, user_id: int | None) -> frozenset[int] | None:
    """The collections a user may read (None: all). `user_id` None is the operator at the
    command line; a user deleted since signing in reads nothing, like an anonymous one."""
    if user_id is None:
        return None
    user = get_user_model().objects.filter(pk=user_id).first()
    return collection_ids_readable(user=user or AnonymousUser())
