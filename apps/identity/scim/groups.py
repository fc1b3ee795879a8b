"""Writes of SCIM provisioning for groups: made, renamed, members added and removed, deleted.

A membership SCIM gives is recorded like a directory's (`DirectoryMembership`, source scim) and
audited; collection access follows at once, since it reads the Django groups.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction

from apps.identity.audit.services import identity_event_record
from apps.identity.models import DirectoryMembership
from apps.identity.scim.resources import ScimError
from apps.identity.scim.services import patch_operation
from apps.identity.vocabulary import EventKind, Source

_MEMBER_PATH = re.compile(r'^members\[value eq "([^"]+)"\]$', re.IGNORECASE)


def _users(values: Any) -> list[User]:
    ids = [str(v.get("value", "")) for v in values or [] if isinstance(v, dict)]
    found = list(User.objects.filter(pk__in=[i for i in ids if i.isdigit()]))
    if len(found) != len(set(ids)):
        raise ScimError(400, "a member is not a known user id", "invalidValue")
    return found


def _members_add(group: Group, users: list[User]) -> None:
    for user in users:
        DirectoryMembership.objects.get_or_create(user=user, group=group, source=Source.SCIM)
        group.user_set.add(user)
        identity_event_record(
            kind=EventKind.GROUP_ADDED, source=Source.SCIM, user=user, detail=group.name
        )


def _members_remove(group: Group, users: list[User]) -> None:
    DirectoryMembership.objects.filter(group=group, user__in=users, source=Source.SCIM).delete()
    group.user_set.remove(*users)
    for user in users:
        identity_event_record(
            kind=EventKind.GROUP_REMOVED, source=Source.SCIM, user=user, detail=group.name
        )


@transaction.atomic
def scim_group_create(*, data: dict[str, Any]) -> Group:
    name = str(data.get("displayName") or "").strip()
    if not name:
        raise ScimError(400, "displayName is required", "invalidValue")
    if Group.objects.filter(name=name).exists():
        raise ScimError(409, f"a group named {name!r} exists", "uniqueness")
    group = Group.objects.create(name=name[:150])
    _members_add(group, _users(data.get("members")))
    return group


@transaction.atomic
def scim_group_patch(*, group: Group, operations: list[dict[str, Any]]) -> Group:
    for operation in operations:
        op, path, value = patch_operation(operation)
        if match := _MEMBER_PATH.match(path):
            _members_remove(group, _users([{"value": match.group(1)}]))
        elif path.lower() == "members" and op == "remove" and value is None:
            _members_remove(group, list(group.user_set.all()))
        elif path.lower() == "members":
            users = _users(value)
            if op == "remove":
                _members_remove(group, users)
            else:
                if op == "replace":
                    _members_remove(group, [u for u in group.user_set.all() if u not in users])
                _members_add(group, [u for u in users if u not in group.user_set.all()])
        elif path.lower() == "displayname" or (not path and isinstance(value, dict)):
            group.name = str(value if path else value.get("displayName", group.name))[:150]
            group.save(update_fields=["name"])
        else:
            raise ScimError(400, f"unsupported path {path!r}", "invalidPath")
    return group


def scim_group_delete(*, group: Group) -> None:
    _members_remove(group, list(group.user_set.all()))
    group.delete()
