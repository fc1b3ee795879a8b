"""Writes of an OpenID Connect sign-in: the account made just in time, or brought up to date."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest

from apps.identity.audit.services import identity_event_record
from apps.identity.groups.services import memberships_apply
from apps.identity.models import ExternalIdentity
from apps.identity.oidc.claims import Profile
from apps.identity.oidc.providers import OidcProvider
from apps.identity.oidc.refusals import OidcRefusal, OidcRefused
from apps.identity.vocabulary import EventKind, Source


@transaction.atomic
def oidc_account_create(
    *,
    provider: OidcProvider,
    subject: str,
    profile: Profile,
    groups: list[str] | None,
    request: HttpRequest | None,
) -> User:
    users = get_user_model().objects
    if users.filter(username=profile.username).exists():
        # Taking over a local account by its name would let the provider sign in as anyone.
        raise OidcRefused(OidcRefusal.LOCAL_ACCOUNT, f"{profile.username} exists locally")
    user = users.create_user(username=profile.username, password=None)
    ExternalIdentity.objects.create(
        user=user, source=Source.OIDC, issuer=provider.issuer, subject=subject
    )
    identity_event_record(
        kind=EventKind.ACCOUNT_CREATED,
        source=Source.OIDC,
        provider=provider.label,
        user=user,
        request=request,
    )
    return oidc_account_update(
        provider=provider, user=user, profile=profile, groups=groups, request=request
    )


@transaction.atomic
def oidc_account_update(
    *,
    provider: OidcProvider,
    user: User,
    profile: Profile,
    groups: list[str] | None,
    request: HttpRequest | None,
) -> User:
    user.first_name, user.last_name = profile.first_name, profile.last_name
    user.email = profile.email
    user.save(update_fields=["first_name", "last_name", "email"])
    if groups is not None:
        memberships_apply(
            user=user,
            source=Source.OIDC,
            external_names=groups,
            provider=provider.label,
            request=request,
        )
    return user
