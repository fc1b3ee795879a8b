"""Why a person may read a collection, and who may read one: explanations, not a second rule.

Whether someone reads or writes a collection is decided by the corpus's one access rule
(`apps.corpus.access`); these reads only say *why*, from the same fields that rule reads (the
collection's public flag, its reader and writer groups, the superuser flag) and from which
source made each group membership (a `DirectoryMembership` row: OpenID Connect with its
provider, LDAP or SCIM; none: an administrator added it by hand).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db.models import Q

from apps.corpus.access import collections_readable, collections_writable
from apps.corpus.models import Collection
from apps.identity.models import DirectoryMembership, ExternalIdentity
from apps.identity.oidc.providers import oidc_providers
from apps.identity.vocabulary import Source

BY_HAND = "added by hand"


@dataclass(frozen=True)
class Grant:
    """One group that gives access, as reader or writer, and where its membership came from."""

    group: str
    role: str  # "reader" or "writer"
    sources: tuple[str, ...]


@dataclass(frozen=True)
class CollectionReason:
    collection: Collection
    writes: bool
    public: bool
    superuser: bool
    grants: tuple[Grant, ...]


@dataclass(frozen=True)
class Reader:
    user: User
    reads: bool
    writes: bool
    grants: tuple[Grant, ...]


def _membership_sources(
    *, user_ids: set[int], group_ids: set[int]
) -> dict[tuple[int, int], list[str]]:
    rows = DirectoryMembership.objects.filter(user_id__in=user_ids, group_id__in=group_ids)
    issuers = dict(
        ExternalIdentity.objects.filter(user_id__in=user_ids, source=Source.OIDC).values_list(
            "user_id", "issuer"
        )
    )
    labels = {p.issuer: p.label for p in oidc_providers()}
    found: dict[tuple[int, int], list[str]] = defaultdict(list)
    for row in rows.order_by("source"):
        text = Source(row.source).label
        if row.source == Source.OIDC and row.user_id in issuers:
            text += f" ({labels.get(issuers[row.user_id], issuers[row.user_id])})"
        found[(row.user_id, row.group_id)].append(text)
    return found


def _grants(
    *,
    user_id: int,
    collection: Collection,
    groups: set[int],
    sources: dict[tuple[int, int], list[str]],
) -> tuple[Grant, ...]:
    grants = []
    for role, related in (
        ("writer", collection.writer_groups),
        ("reader", collection.reader_groups),
    ):
        for group in related.all():
            if group.pk in groups:
                found = sources.get((user_id, group.pk)) or [BY_HAND]
                grants.append(Grant(group=group.name, role=role, sources=tuple(found)))
    return tuple(grants)


def user_access_explain(*, user: User) -> list[CollectionReason]:
    """Every collection `user` may read (by the access rule), with why."""
    readable = collections_readable(user=user).prefetch_related("reader_groups", "writer_groups")
    writable = set(collections_writable(user=user).values_list("pk", flat=True))
    groups = set(user.groups.values_list("pk", flat=True))
    sources = _membership_sources(user_ids={user.pk}, group_ids=groups)
    return [
        CollectionReason(
            collection=collection,
            writes=collection.pk in writable,
            public=collection.public,
            superuser=user.is_superuser,
            grants=_grants(user_id=user.pk, collection=collection, groups=groups, sources=sources),
        )
        for collection in readable.order_by("name")
    ]


def collection_readers_explain(*, collection: Collection, limit: int) -> list[Reader]:
    """The members of `collection`'s reader and writer groups (at most `limit`), each with
    what the access rule gives them and through which groups."""
    collection = Collection.objects.prefetch_related("reader_groups", "writer_groups").get(
        pk=collection.pk
    )
    group_ids = set(
        Group.objects.filter(
            Q(readable_collections=collection) | Q(writable_collections=collection)
        ).values_list("pk", flat=True)
    )
    members = User.objects.filter(groups__in=group_ids).distinct().order_by("username")[:limit]
    users = list(members.prefetch_related("groups"))
    sources = _membership_sources(user_ids={u.pk for u in users}, group_ids=group_ids)
    readers = []
    for user in users:
        mine = {g.pk for g in user.groups.all()} & group_ids
        readers.append(
            Reader(
                user=user,
                reads=collections_readable(user=user).filter(pk=collection.pk).exists(),
                writes=collections_writable(user=user).filter(pk=collection.pk).exists(),
                grants=_grants(
                    user_id=user.pk, collection=collection, groups=mine, sources=sources
                ),
            )
        )
    return readers
