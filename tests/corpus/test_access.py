"""apps/corpus/access.py: who reads and writes which collection; and a search restricted to
no collection finds nothing."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.core.management import call_command
from django.db import connection

from apps.corpus.access import (
    collection_ids_readable,
    collection_writable,
    collections_readable,
    collections_writable,
)
from apps.corpus.ingestion.services import collection_get_or_create
from apps.corpus.models import Collection
from apps.corpus.search.legs import (
    KeywordQuery,
    SearchFilters,
    chunks_dense_search,
    chunks_keyword_search,
    dense_search_sql,
)
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def private() -> Collection:
    return CollectionFactory.create(name="Private", public=False)


@pytest.fixture
def public() -> Collection:
    return CollectionFactory.create(name="Public", public=True)


def _user(name: str, *groups: Group, change_document: bool = False, active: bool = True) -> User:
    user = User.objects.create_user(name, password="a-long-test-password", is_active=active)
    user.groups.add(*groups)
    if change_document:
        user.user_permissions.add(Permission.objects.get(codename="change_document"))
    return User.objects.get(pk=user.pk)  # a fresh object: no cached permissions


def test_a_plain_user_reads_public_collections_only(
    private: Collection, public: Collection
) -> None:
    user = _user("plain")
    assert collection_ids_readable(user=user) == {public.pk}
    assert list(collections_readable(user=user)) == [public]


def test_reader_and_writer_groups_read(private: Collection, public: Collection) -> None:
    readers, writers = Group.objects.create(name="r"), Group.objects.create(name="w")
    private.reader_groups.add(readers)
    other = CollectionFactory.create(name="Other", public=False)
    other.writer_groups.add(writers)
    both = _user("both", readers, writers)
    assert collection_ids_readable(user=both) == {private.pk, public.pk, other.pk}
    # In the reader and the writer group of one collection: listed once.
    private.writer_groups.add(writers)
    assert sorted(c.name for c in collections_readable(user=both)) == ["Other", "Private", "Public"]


def test_writing_needs_a_writer_group_and_the_change_permission(private: Collection) -> None:
    readers, writers = Group.objects.create(name="r"), Group.objects.create(name="w")
    private.reader_groups.add(readers)
    private.writer_groups.add(writers)
    reader = _user("reader", readers, change_document=True)
    writer_without_permission = _user("w1", writers)
    writer = _user("w2", writers, change_document=True)
    assert not collection_writable(user=reader, collection=private)
    assert not collection_writable(user=writer_without_permission, collection=private)
    assert collection_writable(user=writer, collection=private)
    assert list(collections_writable(user=writer)) == [private]
    assert list(collections_writable(user=reader)) == []


def test_superusers_read_and_write_everything(private: Collection) -> None:
    boss = User.objects.create_superuser("boss", password="a-long-test-password")
    assert collection_ids_readable(user=boss) is None
    assert list(collections_readable(user=boss)) == [private]
    assert collection_writable(user=boss, collection=private)


def test_inactive_and_anonymous_users_read_nothing(private: Collection, public: Collection) -> None:
    group = Group.objects.create(name="g")
    private.writer_groups.add(group)
    inactive = _user("gone", group, change_document=True, active=False)
    inactive_boss = User.objects.create_superuser("old", password="x-long-pass", is_active=False)
    for user in (inactive, inactive_boss, AnonymousUser()):
        assert collection_ids_readable(user=user) == frozenset()
        assert not collections_readable(user=user).exists()
    assert not collection_writable(user=inactive, collection=private)
    assert not collection_writable(user=inactive_boss, collection=private)


def test_the_operator_at_the_command_line_reads_everything(private: Collection) -> None:
    assert collection_ids_readable(user=None) is None
    assert list(collections_readable(user=None)) == [private]


def test_new_collections_are_private_unless_asked() -> None:
    assert not collection_get_or_create(name="Fresh").public
    assert collection_get_or_create(name="Fresh", public=True).public
    assert Collection.objects.get(name="Fresh").public
    # --public opens a collection but never closes one.
    assert collection_get_or_create(name="Fresh").public


def test_ingest_public_flag(tmp_path: Path, embedder: CountingEmbedder) -> None:
    (tmp_path / "a.md").write_text("# A\n\nSome text.")
    call_command("ingest", str(tmp_path), "--collection", "Closed", "--wait", stdout=StringIO())
    call_command(
        "ingest", str(tmp_path), "--collection", "Open", "--public", "--wait", stdout=StringIO()
    )
    assert not Collection.objects.get(name="Closed").public
    assert Collection.objects.get(name="Open").public


def test_a_search_restricted_to_no_collection_finds_nothing(embedder: CountingEmbedder) -> None:
    handbook = handbook_load(embedder, "H")
    nothing = SearchFilters(collection_ids=())
    query = KeywordQuery.from_text("annual leave")
    vector = embedder.embed_query("annual leave").tolist()
    own = SearchFilters(collection_ids=(handbook.pk,))
    assert chunks_dense_search(embedding=vector, filters=own, limit=5)
    assert chunks_dense_search(embedding=vector, filters=nothing, limit=5) == []
    for scoring in ("bm25", "ts_rank_cd"):
        assert chunks_keyword_search(query=query, filters=own, limit=5, scoring=scoring)
        assert chunks_keyword_search(query=query, filters=nothing, limit=5, scoring=scoring) == []
    # The SQL itself honours an empty set, should a caller skip the short cut.
    sql, params = dense_search_sql(embedding=vector, filters=nothing, limit=5)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        assert cursor.fetchall() == []
