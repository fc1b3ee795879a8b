"""The roles that ship (readers, editors, auditors, analysts) and the collection migration:
what each role may open in the admin, and an upgrade keeping existing collections readable."""

from __future__ import annotations

import importlib

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from apps.corpus.models import Collection
from tests.answers.access_world import ROLES, role
from tests.factories import CollectionFactory, TurnFactory

# Identity's own migration adds what auditors read of the identity audit.
IDENTITY_AUDITOR: list[str] = importlib.import_module(
    "apps.identity.migrations.0002_auditors_read_identity_events"
).AUDITOR_PERMISSIONS


def _migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_upgrade_keeps_existing_collections_public_and_creates_the_roles() -> None:
    before = ("corpus", "0003_chunk_term_postings")
    executor = _migrate([before])
    old_model = executor.loader.project_state(before).apps.get_model("corpus", "Collection")
    old_model.objects.create(name="From before")
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    _migrate(leaves)

    assert Collection.objects.get(name="From before").public
    assert not Collection.objects.create(name="New").public
    for name, permissions in ROLES.items():
        group = Group.objects.get(name=name)
        granted = set(group.permissions.values_list("content_type__app_label", "codename"))
        extra = {("identity", codename) for codename in IDENTITY_AUDITOR}
        assert granted == set(permissions) | (extra if name == "auditors" else set())
    analysts = set(
        Group.objects.get(name="analysts").permissions.values_list("codename", flat=True)
    )
    assert not analysts & {"view_turn", "view_conversation", "view_turnevent", "view_citation"}


def _staff(name: str, *roles: str) -> Client:
    user = User.objects.create_user(name, password="a-long-test-password", is_staff=True)
    user.groups.add(*(role(r) for r in roles))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_analysts_see_the_dashboard_but_no_question() -> None:
    turn = TurnFactory.create(question="What is my salary?")
    analyst = _staff("analyst", "analysts")
    assert analyst.get(reverse("admin:analytics_dashboard")).status_code == 200
    for url in (
        reverse("admin:answers_turn_changelist"),
        reverse("admin:answers_turn_change", args=[turn.pk]),
        reverse("admin:answers_conversation_changelist"),
        reverse("admin:answers_turn_export"),
    ):
        response = analyst.get(url)
        assert response.status_code == 403, url
        assert b"What is my salary?" not in response.content


@pytest.mark.django_db
def test_auditors_read_turns_and_export_but_see_no_dashboard() -> None:
    a, b = CollectionFactory.create(name="Handbook A"), CollectionFactory.create(name="Handbook B")
    turn = TurnFactory.create(readable_collections=[a.pk, b.pk])
    everything = TurnFactory.create()
    auditor = _staff("auditor", "auditors")
    assert auditor.get(reverse("admin:analytics_dashboard")).status_code == 403
    assert auditor.get(reverse("admin:answers_turn_changelist")).status_code == 200
    assert auditor.get(reverse("admin:answers_turn_export")).status_code == 200
    page = auditor.get(reverse("admin:answers_turn_change", args=[turn.pk])).content.decode()
    assert "Handbook A, Handbook B" in page  # the collections the turn could read, by name
    page = auditor.get(reverse("admin:answers_turn_change", args=[everything.pk])).content.decode()
    assert "every collection" in page
    assert auditor.get(reverse("admin:answers_turn_delete", args=[turn.pk])).status_code == 403


@pytest.mark.django_db
def test_readers_have_no_admin() -> None:
    user = User.objects.create_user("reader", password="a-long-test-password")
    user.groups.add(role("readers"))
    client = Client()
    client.force_login(user)
    assert client.get(reverse("admin:index")).status_code == 302
