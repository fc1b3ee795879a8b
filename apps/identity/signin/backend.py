"""Local passwords, which can be turned off for everyone but the break-glass superusers.

With RAG_LOCAL_PASSWORDS=break-glass only an active superuser named in
RAG_BREAK_GLASS_USERS signs in with a password (the way in when the identity provider or the
directory is down); everyone else signs in through OpenID Connect or LDAP.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User

from apps.identity.vocabulary import Source


def break_glass(user: AbstractBaseUser) -> bool:
    return bool(getattr(user, "is_superuser", False)) and (
        user.get_username() in settings.RAG_BREAK_GLASS_USERS
    )


class LocalPasswordBackend(ModelBackend):
    identity_source = Source.PASSWORD

    def user_can_authenticate(self, user: User | AnonymousUser | None) -> bool:
        if not super().user_can_authenticate(user):
            return False
        return settings.RAG_LOCAL_PASSWORDS == "all" or (
            isinstance(user, User) and break_glass(user)
        )
