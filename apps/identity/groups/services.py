"""A directory's groups for one person become their Django groups, at every sign-in.

A directory group name maps to the Django groups of its `GroupMapping` rows for that source;
with RAG_IDENTITY_GROUPS_EXACT a name with no mapping row maps to the Django group of exactly
that name, if there is one (groups are never created from a claim). What the directory granted
before and no longer says is taken away; a group an admin added by hand, that the directory
never granted, is left alone. Every change is written to the identity audit.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.http import HttpRequest

from apps.identity.audit.services import identity_event_record
from apps.identity.models import DirectoryMembership, GroupMapping
from apps.identity.vocabulary import EventKind, Source


def groups_mapped(*, source: Source, external_names: Iterable[str]) -> set[Group]:
    names = set(external_names)
    mapped = GroupMapping.objects.filter(source=source, external_name__in=names)
    groups = {m.group for m in mapped.select_related("group")}
    if settings.RAG_IDENTITY_GROUPS_EXACT:
        unmapped = names - set(mapped.values_list("external_name", flat=True))
        groups.update(Group.objects.filter(name__in=unmapped))
    return groups


@transaction.atomic
def memberships_apply(
    *,
    user: User,
    source: Source,
    external_names: Iterable[str],
    provider: str = "",
    request: HttpRequest | None = None,
) -> tuple[set[str], set[str]]:
    """Make the groups `source` granted `user` exactly those its names map to now.

    Returns the names of the Django groups (added, removed)."""
    wanted = groups_mapped(source=source, external_names=external_names)
    memberships = DirectoryMembership.objects.filter(user=user, source=source)
    granted = {m.group for m in memberships.select_related("group")}
    added, removed = wanted - granted, granted - wanted
    for group in added:
        DirectoryMembership.objects.create(user=user, group=group, source=source)
        user.groups.add(group)
    if removed:
        DirectoryMembership.objects.filter(user=user, source=source, group__in=removed).delete()
        # A group another source (or an admin) also grants stays.
        kept = DirectoryMembership.objects.filter(user=user, group__in=removed)
        kept_ids = set(kept.values_list("group_id", flat=True))
        user.groups.remove(*[g for g in removed if g.pk not in kept_ids])
    for kind, changed in ((EventKind.GROUP_ADDED, added), (EventKind.GROUP_REMOVED, removed)):
        for group in sorted(changed, key=lambda g: g.name):
            identity_event_record(
                kind=kind,
                source=source,
                provider=provider,
                user=user,
                request=request,
                detail=group.name,
            )
    return {g.name for g in added}, {g.name for g in removed}
