"""Signing in through a real OpenLDAP directory (slapd, started by the tests)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from apps.corpus.access import collection_ids_readable
from apps.identity.models import GroupMapping, IdentityEvent
from apps.identity.vocabulary import EventKind, Source
from tests.factories import CollectionFactory
from tests.identity.directory import PASSWORDS, Directory, person_dn

pytestmark = pytest.mark.django_db


def _sign_in(client: Client, username: str, password: str) -> int:
    return client.post("/accounts/login/", {"username": username, "password": password}).status_code


def test_ldap_sign_in_makes_the_account_with_its_nested_groups(ldap_settings: Directory) -> None:
    research, engineers = (
        Group.objects.create(name="research"),
        Group.objects.create(name="engineers"),
    )
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    ada = User.objects.get(username="ada")
    assert (ada.first_name, ada.last_name, ada.email) == ("Ada", "Directory", "ada@example.org")
    # research holds engineers, which holds ada: nested membership counts.
    assert set(ada.groups.all()) == {research, engineers}
    assert not ada.has_usable_password()
    event = IdentityEvent.objects.get(kind=EventKind.SIGN_IN, username="ada")
    assert (event.source, event.provider, event.address) == (
        Source.LDAP,
        ldap_settings.uri,
        "127.0.0.1",
    )


def test_ldap_staff_and_superuser_flags_come_from_groups(ldap_settings: Directory) -> None:
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    assert _sign_in(Client(), "ben", PASSWORDS["ben"]) == 302
    ada, ben = User.objects.get(username="ada"), User.objects.get(username="ben")
    assert (ada.is_staff, ada.is_superuser) == (True, False)
    assert (ben.is_staff, ben.is_superuser) == (False, True)


def test_ldap_group_mapping_table_maps_a_directory_group(
    ldap_settings: Directory, settings: object
) -> None:
    settings.RAG_IDENTITY_GROUPS_EXACT = False  # type: ignore[attr-defined]
    readers = Group.objects.create(name="research readers")
    Group.objects.create(name="research")  # same name, but exact names are off
    GroupMapping.objects.create(source=Source.LDAP, external_name="research", group=readers)
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    assert list(User.objects.get(username="ada").groups.all()) == [readers]


def test_ldap_user_removed_from_a_group_loses_access_at_next_sign_in(
    ldap_settings: Directory,
) -> None:
    research = Group.objects.create(name="research")
    private = CollectionFactory.create(public=False)
    private.reader_groups.add(research)
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    ada = User.objects.get(username="ada")
    assert private.pk in (collection_ids_readable(user=ada) or ())
    ldap_settings.member_remove(group="engineers", member=person_dn("ada"))
    try:
        assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    finally:
        ldap_settings.member_add(group="engineers", member=person_dn("ada"))
    ada.refresh_from_db()
    assert list(ada.groups.all()) == []
    assert private.pk not in (collection_ids_readable(user=ada) or ())
    removed = IdentityEvent.objects.get(kind=EventKind.GROUP_REMOVED)
    assert (removed.username, removed.detail, removed.source) == ("ada", "research", Source.LDAP)


def test_ldap_keeps_a_group_an_admin_added_by_hand(ldap_settings: Directory) -> None:
    local = Group.objects.create(name="editors by hand")
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    ada = User.objects.get(username="ada")
    ada.groups.add(local)
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302
    assert local in ada.groups.all()


def test_ldap_wrong_password_is_refused_and_audited(ldap_settings: Directory) -> None:
    response = Client().post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 200
    assert b"did not match" in response.content
    assert not User.objects.filter(username="ada").exists()
    failed = IdentityEvent.objects.get(kind=EventKind.SIGN_IN_FAILED)
    assert (failed.username, failed.address) == ("ada", "127.0.0.1")


def test_ldap_directory_down_says_so_and_break_glass_still_signs_in(
    ldap_settings: Directory, settings: object
) -> None:
    settings.RAG_LOCAL_PASSWORDS = "break-glass"  # type: ignore[attr-defined]
    settings.RAG_BREAK_GLASS_USERS = ["root"]  # type: ignore[attr-defined]
    User.objects.create_superuser("root", "root@example.org", "a-break-glass-password")
    ldap_settings.stop()
    try:
        response = Client().post(
            "/accounts/login/", {"username": "ada", "password": PASSWORDS["ada"]}
        )
        admin = Client().post("/admin/login/", {"username": "ada", "password": PASSWORDS["ada"]})
        assert _sign_in(Client(), "root", "a-break-glass-password") == 302
    finally:
        ldap_settings.start()
    assert response.status_code == 200
    assert b"The directory cannot be reached right now" in response.content
    assert b"The directory cannot be reached right now" in admin.content
    failed = IdentityEvent.objects.filter(kind=EventKind.SIGN_IN_FAILED, username="ada").first()
    assert failed is not None and "directory cannot be reached" in failed.detail
    signed_in = IdentityEvent.objects.get(kind=EventKind.SIGN_IN, username="root")
    assert signed_in.source == Source.PASSWORD


def test_ldap_local_passwords_off_refuses_everyone_but_break_glass(
    ldap_settings: Directory, settings: object
) -> None:
    settings.RAG_LOCAL_PASSWORDS = "break-glass"  # type: ignore[attr-defined]
    settings.RAG_BREAK_GLASS_USERS = ["root"]  # type: ignore[attr-defined]
    User.objects.create_user("carol", password="a-local-password-1")
    User.objects.create_superuser("other-admin", "o@example.org", "a-local-password-2")
    assert _sign_in(Client(), "carol", "a-local-password-1") == 200
    assert _sign_in(Client(), "other-admin", "a-local-password-2") == 200
    assert _sign_in(Client(), "ada", PASSWORDS["ada"]) == 302  # the directory still works
