"""The identity audit in the admin (auditors read it, nobody edits it) and its retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from apps.identity.audit.services import identity_event_record, identity_events_purge
from apps.identity.models import IdentityEvent
from apps.identity.vocabulary import EventKind, Source

pytestmark = pytest.mark.django_db
CHANGELIST = "/admin/identity/identityevent/"


def _auditor() -> Client:
    auditor = User.objects.create_user("audrey", password="an-auditor-password", is_staff=True)
    auditor.groups.add(Group.objects.get(name="auditors"))
    client = Client()
    client.force_login(auditor)
    return client


def test_identity_audit_is_read_by_auditors_and_never_edited() -> None:
    identity_event_record(
        kind=EventKind.SIGN_IN_FAILED, source=Source.OIDC, provider="IdP", username="mallory"
    )
    client = _auditor()
    page = client.get(CHANGELIST)
    assert page.status_code == 200 and b"mallory" in page.content
    assert client.get(f"{CHANGELIST}add/").status_code == 403
    event = IdentityEvent.objects.get(kind=EventKind.SIGN_IN_FAILED)
    assert client.post(f"{CHANGELIST}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    exported = client.post(CHANGELIST, {"action": "export_csv", "_selected_action": [event.pk]})
    assert exported["Content-Type"] == "text/csv" and b"mallory" in exported.content


def test_identity_audit_is_hidden_from_staff_without_the_role() -> None:
    client = Client()
    client.force_login(User.objects.create_user("eddie", password="x-long-password", is_staff=True))
    assert client.get(CHANGELIST).status_code == 403


def test_identity_audit_keeps_rows_for_the_retention_only() -> None:
    old = identity_event_record(kind=EventKind.SIGN_IN, source=Source.LDAP, username="old")
    IdentityEvent.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=400))
    identity_event_record(kind=EventKind.SIGN_IN, source=Source.LDAP, username="new")
    assert identity_events_purge(days=365) == 1
    assert list(IdentityEvent.objects.values_list("username", flat=True)) == ["new"]
