"""The LDAP / Active Directory backend: django-auth-ldap, configured from RAG_LDAP_*.

It binds with the service account, finds the person, binds as them to check the password,
reads their groups (nested ones too, with the nested group types), sets is_staff and
is_superuser from RAG_LDAP_STAFF_GROUP and RAG_LDAP_SUPERUSER_GROUP, and applies the groups
to Django groups at every sign-in. A directory that cannot be reached refuses with that
reason; the local password backend before it still signs in break-glass accounts.
"""

from __future__ import annotations

from typing import Any

import ldap
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from django_auth_ldap.backend import LDAPBackend, ldap_error
from django_auth_ldap.config import LDAPSettings

from apps.identity.groups.services import memberships_apply
from apps.identity.ldap.config import directory_settings
from apps.identity.signin.forms import DIRECTORY_DOWN, request_refusal_note
from apps.identity.vocabulary import Source

# No Django setting has this prefix: every value comes from `directory_settings`.
_NO_PREFIX = "RAG_IDENTITY_LDAP_UNSET_"


class DirectoryBackend(LDAPBackend):
    identity_source = Source.LDAP

    @staticmethod
    def identity_provider(request: HttpRequest | None = None) -> str:
        return str(settings.RAG_LDAP_URI)

    @property
    def settings(self) -> LDAPSettings:
        if self._settings is None:
            self._settings: LDAPSettings | None = LDAPSettings(_NO_PREFIX, directory_settings())
        return self._settings

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if not settings.RAG_LDAP_URI or username is None:
            return None
        user: User | None = super().authenticate(request, username, password, **kwargs)
        return user

    def get_user(self, user_id: int) -> User | None:
        # django-auth-ldap's get_user admits a deactivated account's session; ModelBackend not.
        user: User | None = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    def authenticate_ldap_user(self, ldap_user: Any, password: str) -> User | None:
        user: User | None = super().authenticate_ldap_user(ldap_user, password)
        if user is not None:
            memberships_apply(
                user=user,
                source=Source.LDAP,
                external_names=ldap_user.group_names,
                provider=self.identity_provider(),
                request=ldap_user._request,
            )
        return user


def _directory_error(
    sender: Any, context: str, request: HttpRequest | None = None, exception: Any = None, **_: Any
) -> None:
    if isinstance(exception, ldap.SERVER_DOWN | ldap.TIMEOUT | ldap.CONNECT_ERROR):
        request_refusal_note(request, DIRECTORY_DOWN)


def directory_errors_connect() -> None:
    ldap_error.connect(_directory_error, dispatch_uid="identity-directory-error")
