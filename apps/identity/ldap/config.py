"""django-auth-ldap's settings from the platform's own (RAG_LDAP_*), read per sign-in."""

from __future__ import annotations

from typing import Any

import ldap
from django.conf import settings
from django_auth_ldap.config import (
    ActiveDirectoryGroupType,
    GroupOfNamesType,
    LDAPGroupType,
    LDAPSearch,
    NestedActiveDirectoryGroupType,
    NestedGroupOfNamesType,
)

GROUP_TYPES: dict[str, type[LDAPGroupType]] = {
    "nested-group-of-names": NestedGroupOfNamesType,
    "group-of-names": GroupOfNamesType,
    "nested-active-directory": NestedActiveDirectoryGroupType,
    "active-directory": ActiveDirectoryGroupType,
}
# The attributes OpenLDAP's inetOrgPerson and Active Directory's user share.
ATTRIBUTES = {"first_name": "givenName", "last_name": "sn", "email": "mail"}


def _connection_options() -> dict[Any, Any]:
    timeout = settings.RAG_LDAP_TIMEOUT_S
    options: dict[Any, Any] = {ldap.OPT_NETWORK_TIMEOUT: timeout, ldap.OPT_TIMEOUT: timeout}
    options[ldap.OPT_REFERRALS] = 0  # Active Directory's referrals need a second bind
    if settings.RAG_LDAP_CA_FILE:
        options[ldap.OPT_X_TLS_CACERTFILE] = settings.RAG_LDAP_CA_FILE
        options[ldap.OPT_X_TLS_REQUIRE_CERT] = ldap.OPT_X_TLS_DEMAND
        options[ldap.OPT_X_TLS_NEWCTX] = 0  # last: makes the options above take effect
    return options


def _flags() -> dict[str, str]:
    flags = {
        "is_staff": settings.RAG_LDAP_STAFF_GROUP,
        "is_superuser": settings.RAG_LDAP_SUPERUSER_GROUP,
    }
    return {flag: dn for flag, dn in flags.items() if dn}


def directory_settings() -> dict[str, Any]:
    """django-auth-ldap's settings by their names without the AUTH_LDAP_ prefix."""
    scope = ldap.SCOPE_SUBTREE
    return {
        "SERVER_URI": settings.RAG_LDAP_URI,
        "BIND_DN": settings.RAG_LDAP_BIND_DN,
        "BIND_PASSWORD": settings.RAG_LDAP_BIND_PASSWORD,
        "START_TLS": settings.RAG_LDAP_START_TLS,
        "USER_SEARCH": LDAPSearch(
            settings.RAG_LDAP_USER_BASE, scope, settings.RAG_LDAP_USER_FILTER
        ),
        "GROUP_SEARCH": LDAPSearch(
            settings.RAG_LDAP_GROUP_BASE, scope, settings.RAG_LDAP_GROUP_FILTER
        ),
        "GROUP_TYPE": GROUP_TYPES[settings.RAG_LDAP_GROUP_TYPE](),
        "USER_ATTR_MAP": ATTRIBUTES,
        "USER_FLAGS_BY_GROUP": _flags(),
        "ALWAYS_UPDATE_USER": True,
        "CONNECTION_OPTIONS": _connection_options(),
    }
