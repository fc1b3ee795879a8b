"""The system checks that read the database, run against the real server (which has pgvector)."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.corpus import checks


@pytest.mark.django_db
def test_a_server_with_pgvector_passes() -> None:
    assert checks.pgvector_available(databases=["default"]) == []


@pytest.mark.django_db
def test_a_server_without_the_extension_gets_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No server without pgvector is at hand: ask the same real catalogue for a name it lacks.
    monkeypatch.setattr(checks, "EXTENSION", "vector_not_installed")

    errors = checks.pgvector_available(databases=["default"])

    assert [e.id for e in errors] == ["corpus.E001"]
    assert "vector_not_installed" in errors[0].msg
    assert "DATABASE_URL" in (errors[0].hint or "")


def test_no_database_asked_for_means_no_query() -> None:
    assert checks.pgvector_available(databases=None) == []


@pytest.mark.django_db
def test_the_embedding_check_waits_for_migrate_on_a_new_database() -> None:
    # `manage.py migrate` runs the database checks before it creates any table; the table is
    # moved aside inside the test's transaction, which the end of the test rolls back.
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE corpus_chunk RENAME TO corpus_chunk_aside")

    assert checks.embedding_spaces(databases=["default"]) == []
