"""Accounts and groups as SCIM resources (RFC 7643), and the filters clients send (RFC 7644
section 3.4.2.2: only `attribute eq "value"`, which is what provisioning clients use)."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import Group, User
from django.db.models import QuerySet

from apps.identity.scim.documents import GROUP_SCHEMA, USER_SCHEMA


class ScimError(Exception):
    """A request refused with a SCIM error (RFC 7644 section 3.12)."""

    def __init__(self, status: int, detail: str, scim_type: str = "") -> None:
        super().__init__(detail)
        self.status, self.detail, self.scim_type = status, detail, scim_type


_FILTER = re.compile(r'^\s*(\w+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$', re.IGNORECASE)
_USER_FILTERS = {"username": "username__iexact", "externalid": "username__iexact"}
_GROUP_FILTERS = {"displayname": "name__iexact"}


def _filtered(queryset: QuerySet[Any], text: str, fields: dict[str, str]) -> QuerySet[Any]:
    if not text:
        return queryset
    match = _FILTER.match(text)
    if match is None or match.group(1).lower() not in fields:
        raise ScimError(400, f"unsupported filter {text!r}", "invalidFilter")
    return queryset.filter(**{fields[match.group(1).lower()]: match.group(2)})


def users_filtered(*, text: str) -> QuerySet[User]:
    users = User.objects.order_by("pk").prefetch_related("groups")
    return _filtered(users, text, _USER_FILTERS)


def groups_filtered(*, text: str) -> QuerySet[Group]:
    return _filtered(
        Group.objects.order_by("pk").prefetch_related("user_set"), text, _GROUP_FILTERS
    )


def user_resource(user: User, *, base: str) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "schemas": [USER_SCHEMA],
        "id": str(user.pk),
        "userName": user.username,
        "name": {"givenName": user.first_name, "familyName": user.last_name},
        "displayName": user.get_full_name() or user.username,
        "active": user.is_active,
        "groups": [{"value": str(g.pk), "display": g.name} for g in user.groups.all()],
        "meta": {"resourceType": "User", "location": f"{base}/Users/{user.pk}"},
    }
    if user.email:
        resource["emails"] = [{"value": user.email, "primary": True}]
    return resource


def group_resource(group: Group, *, base: str) -> dict[str, Any]:
    return {
        "schemas": [GROUP_SCHEMA],
        "id": str(group.pk),
        "displayName": group.name,
        "members": [{"value": str(u.pk), "display": u.username} for u in group.user_set.all()],
        "meta": {"resourceType": "Group", "location": f"{base}/Groups/{group.pk}"},
    }
