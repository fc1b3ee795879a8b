"""The identity app's words: where an account's sign-in came from, and what the audit records."""

from __future__ import annotations

from django.db import models


class Source(models.TextChoices):
    """How a person proved who they are; also who granted a group membership."""

    PASSWORD = "password", "local password"
    OIDC = "oidc", "OpenID Connect"
    LDAP = "ldap", "LDAP directory"
    SCIM = "scim", "SCIM provisioning"


class EventKind(models.TextChoices):
    SIGN_IN = "sign_in", "signed in"
    SIGN_IN_FAILED = "sign_in_failed", "sign-in refused"
    SIGN_OUT = "sign_out", "signed out"
    ACCOUNT_CREATED = "account_created", "account created"
    GROUP_ADDED = "group_added", "group added"
    GROUP_REMOVED = "group_removed", "group removed"
    DEACTIVATED = "deactivated", "deactivated"
    REACTIVATED = "reactivated", "reactivated"
