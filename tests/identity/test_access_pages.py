"""The admin's "who reads what" pages: for a collection who reads it through which group and
source, for a person why they read what they read; both agree with the access rule."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group, User
from django.test import Client

from apps.corpus.access import collections_readable, collections_writable
from apps.corpus.models import Collection
from apps.identity.access.selectors import collection_readers_explain, user_access_explain
from apps.identity.groups.services import memberships_apply
from apps.identity.models import ExternalIdentity
from apps.identity.vocabulary import Source
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> dict[str, User]:
    research, finance, editors = (
        Group.objects.create(name=n) for n in ("research", "finance", "eds")
    )
    notes = CollectionFactory.create(name="Research notes", public=False)
    notes.reader_groups.add(research)
    notes.writer_groups.add(editors)
    CollectionFactory.create(name="Ledgers", public=False).reader_groups.add(finance)
    CollectionFactory.create(name="Handbook", public=True)
    users = {n: User.objects.create_user(n) for n in ("olga", "lars", "hand", "nobody")}
    ExternalIdentity.objects.create(
        user=users["olga"], source=Source.OIDC, issuer="https://idp.example", subject="olga"
    )
    memberships_apply(user=users["olga"], source=Source.OIDC, external_names=["research"])
    memberships_apply(
        user=users["lars"], source=Source.LDAP, external_names=["finance", "research"]
    )
    users["hand"].groups.add(editors)
    users["admin"] = User.objects.create_superuser("admin", password="a-long-admin-password")
    return users


def test_oidc_ldap_scim_collection_access_page_names_group_and_source(
    world: dict[str, User],
) -> None:
    client = Client()
    client.force_login(world["admin"])
    notes = Collection.objects.get(name="Research notes")
    page = client.get(f"/admin/identity/collectionaccess/{notes.pk}/change/").content.decode()
    assert "reader of <b>research</b> (OpenID Connect (https://idp.example))" in page
    assert "reader of <b>research</b> (LDAP directory)" in page
    assert "writer of <b>eds</b> (added by hand)" in page
    assert "nobody" not in page


def test_oidc_ldap_scim_person_access_page_says_why(world: dict[str, User]) -> None:
    client = Client()
    client.force_login(world["admin"])
    page = client.get(f"/admin/identity/personaccess/{world['lars'].pk}/change/").content.decode()
    assert "reader of <b>finance</b> (LDAP directory)" in page
    assert "Ledgers" in page and "Handbook" in page and "public" in page


def test_oidc_ldap_scim_access_explanations_agree_with_the_access_rule(
    world: dict[str, User],
) -> None:
    for user in world.values():
        explained = {r.collection.name for r in user_access_explain(user=user)}
        assert explained == set(collections_readable(user=user).values_list("name", flat=True))
        writes = {r.collection.name for r in user_access_explain(user=user) if r.writes}
        assert writes == set(collections_writable(user=user).values_list("name", flat=True))
    for collection in Collection.objects.all():
        for reader in collection_readers_explain(collection=collection, limit=50):
            readable = collections_readable(user=reader.user).filter(pk=collection.pk).exists()
            assert reader.reads == readable
            assert reader.grants, f"{reader.user} is listed without a group"
        listed = {
            r.user.username for r in collection_readers_explain(collection=collection, limit=50)
        }
        by_rule = {
            u.username
            for u in world.values()
            if not u.is_superuser and collections_readable(user=u).filter(pk=collection.pk).exists()
        }
        assert listed == by_rule or collection.public


def test_oidc_ldap_scim_collection_access_page_lists_at_most_the_setting(
    world: dict[str, User], settings: LazySettings, django_assert_max_num_queries: Any
) -> None:
    settings.RAG_IDENTITY_ACCESS_PAGE_USERS = 1
    client = Client()
    client.force_login(world["admin"])
    notes = Collection.objects.get(name="Research notes")
    with django_assert_max_num_queries(30):  # the members shown, not all of them
        page = client.get(f"/admin/identity/collectionaccess/{notes.pk}/change/").content.decode()
    assert "At most 1 members are shown." in page
    assert page.count("<td>yes</td><td>") == 1  # one member row (reads: yes) of three
