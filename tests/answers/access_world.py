"""Two private collections with the same handbook, and users in different groups, for the
access tests: who reads what on every path."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission, User

from apps.corpus.models import Chunk, Collection, Document
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder

# The role groups as the data migration defines them (recreated here: a transactional test
# empties the tables, the migration's rows included).
ROLES: dict[str, list[tuple[str, str]]] = importlib.import_module(
    "apps.analytics.migrations.0008_roles_readers_editors_auditors_analysts"
).ROLES

# Which collections each user may read.
EXPECTED: dict[str, set[str]] = {
    "reader_a": {"A"},
    "reader_b": {"B"},
    "editor_a": {"A"},
    "analyst": set(),
    "superuser": {"A", "B"},
}
USERS = list(EXPECTED)


def role(name: str) -> Group:
    group, _ = Group.objects.get_or_create(name=name)
    for app_label, codename in ROLES[name]:
        group.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return group


@dataclass
class World:
    a: Collection
    b: Collection
    users: dict[str, User]
    readers_a: Group

    def document_ids(self, *names: str) -> set[int]:
        return set(Document.objects.filter(collection__name__in=names).values_list("pk", flat=True))

    def chunk_ids(self, *names: str) -> set[int]:
        chunks = Chunk.objects.filter(document__collection__name__in=names)
        return set(chunks.values_list("pk", flat=True))


def collections_of(document_ids: object) -> set[str]:
    """The names of the collections the given document ids belong to."""
    ids = [d for d in document_ids if isinstance(d, int)]  # type: ignore[attr-defined]
    return set(Document.objects.filter(pk__in=ids).values_list("collection__name", flat=True))


def world_build(embedder: CountingEmbedder) -> World:
    a = handbook_load(embedder, "A", public=False)
    b = handbook_load(embedder, "B", public=False)
    readers_a, readers_b = (
        Group.objects.create(name="a-readers"),
        Group.objects.create(name="b-readers"),
    )
    writers_a = Group.objects.create(name="a-writers")
    a.reader_groups.add(readers_a)
    b.reader_groups.add(readers_b)
    a.writer_groups.add(writers_a)
    password = "a-long-test-password"
    users = {
        "reader_a": User.objects.create_user("reader_a", password=password),
        "reader_b": User.objects.create_user("reader_b", password=password),
        "editor_a": User.objects.create_user("editor_a", password=password, is_staff=True),
        "analyst": User.objects.create_user("analyst", password=password, is_staff=True),
        "superuser": User.objects.create_superuser("superuser", password=password),
    }
    users["reader_a"].groups.add(readers_a, role("readers"))
    users["reader_b"].groups.add(readers_b, role("readers"))
    users["editor_a"].groups.add(writers_a, role("editors"))
    users["analyst"].groups.add(role("analysts"))
    return World(a=a, b=b, users=users, readers_a=readers_a)
