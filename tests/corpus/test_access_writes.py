"""Every write path refuses whoever may not write there, and a refusal changes nothing: the API
upload and replace, and the admin upload."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from apps.corpus.models import Collection, Document
from tests.answers.access_world import World, world_build
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

NEW_TEXT = b"# Leave\n\nEmployees take one day of leave."


@pytest.fixture
def world(embedder: CountingEmbedder) -> Iterator[World]:
    built = world_build(embedder)
    # The editor of A may also read B, but not write it.
    built.users["editor_a"].groups.add(Group.objects.get(name="b-readers"))
    yield built


def _api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.get(pk=user.pk))
    return client


def _upload(user: User, collection: str, name: str = "leave.md", data: bytes = NEW_TEXT) -> Any:
    file = SimpleUploadedFile(name, data)
    body = {"file": file, "collection": collection}
    return _api(user).post("/api/documents/", body, format="multipart")


def _state() -> list[tuple[str, str, str]]:
    """Every collection and document as (collection, filename, sha256): what a refusal keeps."""
    rows = Document.objects.values_list("collection__name", "filename", "sha256")
    return sorted(
        [*rows, *((n, "", "") for n in Collection.objects.values_list("name", flat=True))]
    )


@pytest.mark.parametrize(
    ("who", "collection", "status", "message"),
    [
        ("reader_a", "A", 403, "You may not upload documents."),
        ("analyst", "A", 403, "You may not upload documents."),
        ("analyst", "New", 403, "You may not upload documents."),
        ("reader_a", "New", 403, "You may not upload documents."),
        # Readable but not writable: a replace of B's leave.md is refused.
        ("editor_a", "B", 403, "You may not add or replace documents in collection 'B'."),
        # An editor cannot create collections; an unknown name reads as unknown.
        ("editor_a", "Fresh", 404, "No collection named 'Fresh'"),
    ],
)
def test_api_upload_and_replace_are_refused_and_change_nothing(
    world: World, who: str, collection: str, status: int, message: str
) -> None:
    before = _state()
    response = _upload(world.users[who], collection)
    assert response.status_code == status
    assert response.json()["error"]["message"] == message
    assert _state() == before


def test_an_unreadable_collection_is_answered_like_a_missing_one(world: World) -> None:
    editor_b = User.objects.create_user("editor_b", password="a-long-test-password")
    editor_b.groups.add(Group.objects.get(name="editors"))
    before = _state()
    hidden, missing = _upload(editor_b, "A"), _upload(editor_b, "Nope")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"]["message"] == "No collection named 'A'"
    assert missing.json()["error"]["message"] == "No collection named 'Nope'"
    assert _state() == before


def test_an_editor_replaces_a_document_of_a_collection_they_write(world: World) -> None:
    response = _upload(world.users["editor_a"], "A")
    assert response.status_code == 202
    document = Document.objects.get(collection__name="A", filename="leave.md")
    assert document.pk == response.json()["id"] and b"one day" in document.file.read()


def test_who_may_create_a_collection_through_the_api(world: World) -> None:
    creator = world.users["editor_a"]
    creator.user_permissions.add(Permission.objects.get(codename="add_collection"))
    assert _upload(creator, "Team").status_code == 202
    team = Collection.objects.get(name="Team")
    # Private, and writable by the creator's groups, so they can keep filling it.
    assert not team.public
    assert set(team.writer_groups.values_list("name", flat=True)) == {
        "a-writers",
        "editors",
        "b-readers",
    }
    assert _upload(world.users["superuser"], "Boss").status_code == 202
    assert not Collection.objects.get(name="Boss").public


def _admin_upload(user: User, **fields: Any) -> Any:
    client = Client()
    client.force_login(user)
    body = {"uploads": SimpleUploadedFile("leave.md", NEW_TEXT), "new_collection": "", **fields}
    return client.post("/admin/corpus/document/upload/", body)


def test_admin_upload_is_refused_and_changes_nothing(world: World) -> None:
    before = _state()
    assert _admin_upload(world.users["analyst"], collection=world.a.pk).status_code == 403
    assert _admin_upload(world.users["reader_a"], collection=world.a.pk).status_code == 302
    # B is readable by the editor but not writable: not even offered as a choice.
    refused = _admin_upload(world.users["editor_a"], collection=world.b.pk)
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    created = _admin_upload(world.users["editor_a"], new_collection="B")
    assert "You may not add or replace documents in collection" in created.content.decode()
    fresh = _admin_upload(world.users["editor_a"], new_collection="Fresh")
    assert "No collection named" in fresh.content.decode()
    assert _state() == before
    # The editor's own collection takes the upload.
    assert _admin_upload(world.users["editor_a"], collection=world.a.pk).status_code == 302
    assert _state() != before


def test_an_editor_cannot_move_a_document_into_a_collection_they_cannot_write(
    world: World,
) -> None:
    document = Document.objects.filter(collection=world.a).first()
    assert document is not None
    client = Client()
    client.force_login(world.users["editor_a"])
    url = f"/admin/corpus/document/{document.pk}/change/"
    body = {"collection": world.b.pk, "domain": "", "document_type": ""}
    response = client.post(url, body)
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    document.refresh_from_db()
    assert document.collection_id == world.a.pk


def test_admins_set_who_reads_and_writes_a_collection(world: World) -> None:
    client = Client()
    client.force_login(world.users["superuser"])
    url = f"/admin/corpus/collection/{world.b.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="public"' in page and 'name="reader_groups"' in page
    readers = Group.objects.get(name="a-readers")
    body = {"name": "B", "description": "", "public": "on", "reader_groups": [readers.pk]}
    assert client.post(url, body).status_code == 302
    world.b.refresh_from_db()
    assert world.b.public and list(world.b.reader_groups.all()) == [readers]
    # An editor sees only the collections they write, and cannot change them.
    editor = Client()
    editor.force_login(world.users["editor_a"])
    listed = editor.get("/admin/corpus/collection/").content.decode()
    assert f"/admin/corpus/collection/{world.a.pk}/change/" in listed
    assert f"/admin/corpus/collection/{world.b.pk}/change/" not in listed
    assert editor.post(f"/admin/corpus/collection/{world.a.pk}/change/", body).status_code == 403
