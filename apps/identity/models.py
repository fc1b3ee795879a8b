"""Who an account is at its identity provider, which groups a directory gave it, and the audit.

A membership a directory granted is remembered (`DirectoryMembership`), so the next sign-in
can take away exactly what the directory no longer says, and never a group an admin added by
hand.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import models

from apps.corpus.models import Collection
from apps.identity.vocabulary import EventKind, Source

_DIRECTORY_SOURCES = [Source.OIDC, Source.LDAP, Source.SCIM]


class ExternalIdentity(models.Model):
    """An account's subject at an OpenID provider (its `sub`), stable when names change."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identities"
    )
    source = models.CharField(max_length=16, choices=Source.choices)
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "external identities"
        constraints = [
            models.UniqueConstraint(
                fields=["source", "issuer", "subject"], name="identity_external_unique_subject"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.subject}"


class GroupMapping(models.Model):
    """A directory group's name (an OIDC groups value, an LDAP group's cn) -> a Django group."""

    source = models.CharField(max_length=16, choices=Source.choices)
    external_name = models.CharField(
        max_length=255, help_text="The group as the directory names it, matched exactly."
    )
    group = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="directory_mappings")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_name", "group"], name="identity_mapping_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(source__in=_DIRECTORY_SOURCES), name="identity_mapping_source"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.external_name} -> {self.group}"


class DirectoryMembership(models.Model):
    """A group membership a directory granted at sign-in (the auth_user_groups row is beside it)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="directory_memberships"
    )
    group = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=16, choices=Source.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "group", "source"], name="identity_membership_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source}: {self.user_id} in {self.group_id}"


class IdentityEvent(models.Model):
    """One line of the identity audit: append-only, read-only in the admin."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    kind = models.CharField(max_length=24, choices=EventKind.choices)
    source = models.CharField(max_length=16, choices=Source.choices, blank=True)
    provider = models.CharField(max_length=200, blank=True)
    username = models.CharField(max_length=150, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    address = models.GenericIPAddressField(null=True, blank=True)
    detail = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=EventKind.values), name="identity_event_kind_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} {self.username}"


class CollectionAccess(Collection):
    """A collection seen from identity: who reads it, through which group (admin, read-only)."""

    class Meta:
        proxy = True
        verbose_name = "collection access"
        verbose_name_plural = "collection access: who reads what"


class PersonAccess(User):
    """A person seen from identity: what they read, and why (admin, read-only)."""

    class Meta:
        proxy = True
        verbose_name = "person's access"
        verbose_name_plural = "people's access: why they read"
