"""The sources admin: who may write a collection may add, edit and sync its sources, nobody
else sees them; credentials are stored encrypted and never shown back or logged."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from apps.corpus.models import Collection
from apps.sources.credentials import credentials_decrypt
from apps.sources.models import Source, SourceKind, SyncStatus
from apps.sources.sync.services import source_create

pytestmark = pytest.mark.django_db
SECRET = "hunter2-very-secret"


@pytest.fixture
def editor() -> Client:
    writers = Group.objects.create(name="a-writers")
    a = Collection.objects.create(name="A")
    a.writer_groups.add(writers)
    Collection.objects.create(name="B")
    user = User.objects.create_user("editor", password="pw-editor-123", is_staff=True)
    user.groups.add(writers)
    codenames = ["add_source", "change_source", "view_source", "view_sourcesync", "change_document"]
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def _source(collection: str, name: str) -> Source:
    return source_create(
        name=name,
        kind=SourceKind.WEBDAV,
        location="http://127.0.0.1:9/dav/",
        collection=Collection.objects.get(name=collection),
        credentials={"username": "u", "password": SECRET},
    )


def test_an_editor_sees_and_changes_only_the_sources_of_collections_they_write(
    editor: Client,
) -> None:
    mine, theirs = _source("A", "mine"), _source("B", "theirs")

    listing = editor.get("/admin/sources/source/").content.decode()
    other = editor.get(f"/admin/sources/source/{theirs.pk}/change/")
    add = editor.get("/admin/sources/source/add/").content.decode()

    assert "mine" in listing and "theirs" not in listing
    assert other.status_code == 302  # the admin's answer for an object one may not see
    a, b = (Collection.objects.get(name=n).pk for n in ("A", "B"))
    assert f'<option value="{a}"' in add and f'<option value="{b}"' not in add
    assert mine.pk


def test_credentials_are_encrypted_never_shown_back_never_logged(
    editor: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    collection = Collection.objects.get(name="A")
    form = {
        "name": "dav",
        "kind": "webdav",
        "location": "http://127.0.0.1:9/dav/",
        "collection": collection.pk,
        "credentials": f"username=alice\npassword={SECRET}",
        "include_patterns": "",
        "exclude_patterns": "",
        "syncs-TOTAL_FORMS": "0",
        "syncs-INITIAL_FORMS": "0",
    }
    answer = editor.post("/admin/sources/source/add/", form)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    source = Source.objects.get(name="dav")

    page = editor.get(f"/admin/sources/source/{source.pk}/change/").content.decode()
    form["credentials"] = ""  # left empty: the stored ones stay
    editor.post(f"/admin/sources/source/{source.pk}/change/", form)

    assert SECRET not in source.credentials_encrypted
    assert credentials_decrypt(token=Source.objects.get(pk=source.pk).credentials_encrypted) == {
        "username": "alice",
        "password": SECRET,
    }
    assert SECRET not in page and SECRET not in caplog.text


def test_sync_now_pause_and_resume(editor: Client) -> None:
    source = _source("A", "mine")
    url = "/admin/sources/source/"

    editor.post(url, {"action": "sync_now", "_selected_action": [source.pk]})
    again = editor.post(url, {"action": "sync_now", "_selected_action": [source.pk]}, follow=True)
    editor.post(url, {"action": "pause", "_selected_action": [source.pk]})

    source.refresh_from_db()
    assert source.status == SyncStatus.QUEUED and source.paused
    assert "already queued or running" in again.content.decode()
    editor.post(url, {"action": "resume", "_selected_action": [source.pk]})
    assert not Source.objects.get(pk=source.pk).paused


def test_only_a_superuser_may_point_a_source_at_the_servers_disk(editor: Client) -> None:
    form = {
        "name": "disk",
        "kind": "folder",
        "location": "/etc",
        "collection": Collection.objects.get(name="A").pk,
        "syncs-TOTAL_FORMS": "0",
        "syncs-INITIAL_FORMS": "0",
    }
    answer = editor.post("/admin/sources/source/add/", form)

    assert answer.status_code == 200 and "Only superusers" in answer.content.decode()
    assert not Source.objects.filter(name="disk").exists()
