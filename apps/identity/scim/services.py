"""Writes of SCIM provisioning: accounts made, changed and deactivated, groups and members.

Deactivating an account ends its sessions at once (they are deleted, and every backend refuses
an inactive account's session), and DRF refuses its API token from the next request.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from apps.identity.audit.services import identity_event_record
from apps.identity.scim.resources import ScimError
from apps.identity.vocabulary import EventKind, Source


def _email(value: Any) -> str:
    if isinstance(value, list):
        primary = next((e for e in value if isinstance(e, dict) and e.get("primary")), None)
        value = primary or (value[0] if value else {})
    return str(value.get("value", "") if isinstance(value, dict) else value or "")[:254]


def _user_set(user: User, path: str, value: Any) -> None:
    """One attribute of a User from a PUT, POST or PATCH (paths as RFC 7644 3.5.2 names them)."""
    match path.lower():
        case "username":
            user.username = str(value)[:150]
        case "name":
            _user_set(user, "name.givenName", value.get("givenName", user.first_name))
            _user_set(user, "name.familyName", value.get("familyName", user.last_name))
        case "name.givenname":
            user.first_name = str(value or "")[:150]
        case "name.familyname":
            user.last_name = str(value or "")[:150]
        case "emails" | 'emails[type eq "work"].value':
            user.email = _email(value)
        case "active":
            user.is_active = value is True or str(value).lower() == "true"
        case "displayname" | "externalid" | "schemas" | "id" | "meta" | "groups" | "password":
            pass  # derived, read-only here, or kept by the provider
        case _:
            raise ScimError(400, f"unknown attribute {path!r}", "invalidPath")


def _active_changed(user: User, was_active: bool) -> None:
    if was_active and not user.is_active:
        sessions_end(user=user)
        identity_event_record(kind=EventKind.DEACTIVATED, source=Source.SCIM, user=user)
    elif user.is_active and not was_active:
        identity_event_record(kind=EventKind.REACTIVATED, source=Source.SCIM, user=user)


def sessions_end(*, user: User) -> int:
    """Delete every live session of `user`; returns how many."""
    ended = [
        s.pk
        for s in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if s.get_decoded().get("_auth_user_id") == str(user.pk)
    ]
    Session.objects.filter(pk__in=ended).delete()
    return len(ended)


@transaction.atomic
def scim_user_create(*, data: dict[str, Any]) -> User:
    username = str(data.get("userName") or "").strip()
    if not username:
        raise ScimError(400, "userName is required", "invalidValue")
    if User.objects.filter(username__iexact=username).exists():
        raise ScimError(409, f"a user named {username!r} exists", "uniqueness")
    user = User(username=username)
    user.set_unusable_password()
    for path, value in data.items():
        _user_set(user, path, value)
    user.save()
    identity_event_record(kind=EventKind.ACCOUNT_CREATED, source=Source.SCIM, user=user)
    return user


@transaction.atomic
def scim_user_replace(*, user: User, data: dict[str, Any]) -> User:
    was_active = user.is_active
    for path, value in data.items():
        _user_set(user, path, value)
    user.save()
    _active_changed(user, was_active)
    return user


@transaction.atomic
def scim_user_patch(*, user: User, operations: list[dict[str, Any]]) -> User:
    was_active = user.is_active
    for operation in operations:
        op, path, value = patch_operation(operation)
        if op == "remove":
            _user_set(user, path, "" if path.lower() != "active" else False)
        elif path:
            _user_set(user, path, value)
        elif isinstance(value, dict):
            for name, item in value.items():
                _user_set(user, name, item)
        else:
            raise ScimError(
                400, "an operation without a path needs an object value", "invalidValue"
            )
    user.save()
    _active_changed(user, was_active)
    return user


def scim_user_deactivate(*, user: User) -> User:
    return scim_user_patch(
        user=user, operations=[{"op": "replace", "path": "active", "value": False}]
    )


def patch_operation(operation: Any) -> tuple[str, str, Any]:
    if not isinstance(operation, dict):
        raise ScimError(400, "each operation must be an object", "invalidSyntax")
    op = str(operation.get("op", "")).lower()
    if op not in {"add", "replace", "remove"}:
        raise ScimError(400, f"unknown op {operation.get('op')!r}", "invalidSyntax")
    return op, str(operation.get("path") or ""), operation.get("value")
