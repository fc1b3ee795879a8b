"""The LDAP directory the identity tests sign in against, and the settings that point at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import LazySettings

from tests.identity.directory import (
    GROUPS,
    PEOPLE,
    SERVICE_DN,
    SERVICE_PASSWORD,
    Directory,
    group_dn,
    ldap_directory,
)


@pytest.fixture(scope="session")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Directory]:
    with ldap_directory(folder=tmp_path_factory.mktemp("slapd")) as running:
        yield running


@pytest.fixture
def ldap_settings(settings: LazySettings, directory: Directory) -> Directory:
    settings.RAG_LDAP_URI = directory.uri
    settings.RAG_LDAP_BIND_DN = SERVICE_DN
    settings.RAG_LDAP_BIND_PASSWORD = SERVICE_PASSWORD
    settings.RAG_LDAP_USER_BASE = PEOPLE
    settings.RAG_LDAP_GROUP_BASE = GROUPS
    settings.RAG_LDAP_STAFF_GROUP = group_dn("staff")
    settings.RAG_LDAP_SUPERUSER_GROUP = group_dn("admins")
    settings.RAG_LDAP_TIMEOUT_S = 2.0
    return directory
