# mypy: disable-error-code="union-attr,arg-type,call-arg"
# scim2-models types its pydantic models more narrowly than it parses (paths, filters and
# aliases given as plain strings, results as unions): the client checks them at run time.
"""SCIM 2.0 provisioning driven by scim2-client, an RFC 7644 client, against the platform's
own WSGI application: discovery, users and groups made, patched and deactivated."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group as DjangoGroup
from django.contrib.auth.models import User as DjangoUser
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from scim2_client.engines.wsgi import WSGISCIMClient
from scim2_models import (
    Email,
    Group,
    GroupMember,
    Name,
    PatchOp,
    PatchOperation,
    SearchRequest,
    User,
)

from apps.corpus.access import collection_ids_readable
from apps.identity.models import IdentityEvent
from apps.identity.vocabulary import EventKind, Source
from ragplatform.api_tokens import api_token_issue
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db
TOKEN = "a-scim-provisioning-token-for-tests"
BASE = "http://testserver/scim/v2"


class KeptConnectionClient(WSGISCIMClient):
    """As Django's test client does, each request leaves the test's connection open (Django's
    test client connects the closing handlers again after each of its own requests)."""

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            return super().request(method, url, **kwargs)
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)


@pytest.fixture
def scim(settings: LazySettings) -> WSGISCIMClient:
    settings.RAG_SCIM_TOKEN = TOKEN
    client = KeptConnectionClient(
        get_wsgi_application(), base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    client.discover()
    return client


def _dana(scim: WSGISCIMClient) -> Any:
    user: Any = User(
        user_name="dana",
        name=Name(given_name="Dana", family_name="Scully"),
        emails=[Email(value="dana@example.org", primary=True)],
        active=True,
    )
    created = scim.create(user)
    assert created.id  # an instance of the User model the client discovered from /Schemas
    return created


def test_scim_discovery_describes_users_and_groups(scim: WSGISCIMClient) -> None:
    config = Client().get("/scim/v2/ServiceProviderConfig", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert config.json()["patch"] == {"supported": True}
    types = Client().get("/scim/v2/ResourceTypes", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()
    assert {t["id"] for t in types["Resources"]} == {"User", "Group"}
    schemas = Client().get("/scim/v2/Schemas", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()
    assert len(schemas["Resources"]) == 2


def test_scim_refuses_a_wrong_token(scim: WSGISCIMClient) -> None:
    response = Client().get("/scim/v2/Users", HTTP_AUTHORIZATION="Bearer wrong")
    assert response.status_code == 401
    assert response.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]


def test_scim_creates_finds_and_patches_a_user(scim: WSGISCIMClient) -> None:
    created = _dana(scim)
    found = scim.query(User, query_parameters=SearchRequest(filter='userName eq "dana"'))
    assert [r.user_name for r in found.resources] == ["dana"]
    patch = PatchOp[User](
        operations=[
            PatchOperation[User](
                op=PatchOperation.Op.replace_, path="name.familyName", value="Katz"
            )
        ]
    )
    scim.modify(User, created.id, patch)
    dana = DjangoUser.objects.get(username="dana")
    assert (dana.first_name, dana.last_name, dana.email) == ("Dana", "Katz", "dana@example.org")
    assert not dana.has_usable_password()
    assert IdentityEvent.objects.filter(kind=EventKind.ACCOUNT_CREATED, source=Source.SCIM).exists()


def test_scim_duplicate_user_is_a_conflict(scim: WSGISCIMClient) -> None:
    _dana(scim)
    response = Client().post(
        "/scim/v2/Users",
        data='{"userName": "dana"}',
        content_type="application/scim+json",
        HTTP_AUTHORIZATION=f"Bearer {TOKEN}",
    )
    assert response.status_code == 409 and response.json()["scimType"] == "uniqueness"
    assert DjangoUser.objects.filter(username="dana").count() == 1


def test_scim_deactivation_ends_sessions_and_api_tokens_at_once(scim: WSGISCIMClient) -> None:
    created = _dana(scim)
    dana = DjangoUser.objects.get(username="dana")
    browser = Client()
    browser.force_login(dana)
    token = api_token_issue(username="dana")  # stored hashed: the key is only in its answer
    assert browser.get("/api/collections/").status_code == 200
    assert (
        Client().get("/api/collections/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code
        == 200
    )
    patch = PatchOp[User](
        operations=[PatchOperation[User](op=PatchOperation.Op.replace_, path="active", value=False)]
    )
    scim.modify(User, created.id, patch)
    assert browser.get("/api/collections/").status_code in {401, 403}
    assert (
        Client().get("/api/collections/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code
        == 401
    )
    assert IdentityEvent.objects.filter(kind=EventKind.DEACTIVATED, username="dana").exists()


def test_scim_group_membership_opens_and_closes_a_private_collection(scim: WSGISCIMClient) -> None:
    created = _dana(scim)
    group = scim.create(Group(display_name="research", members=[GroupMember(value=created.id)]))
    assert group.id
    private = CollectionFactory.create(public=False)
    private.reader_groups.add(DjangoGroup.objects.get(name="research"))
    dana = DjangoUser.objects.get(username="dana")
    assert private.pk in (collection_ids_readable(user=dana) or ())
    remove = PatchOp[Group](
        operations=[
            PatchOperation[Group](
                op=PatchOperation.Op.remove, path=f'members[value eq "{created.id}"]'
            )
        ]
    )
    scim.modify(Group, group.id, remove)
    assert private.pk not in (collection_ids_readable(user=dana) or ())
    removed = IdentityEvent.objects.get(kind=EventKind.GROUP_REMOVED)
    assert (removed.source, removed.detail) == (Source.SCIM, "research")
    scim.delete(Group, group.id)
    assert not DjangoGroup.objects.filter(name="research").exists()
