"""The pgvector system check, run against the real server (which has the extension)."""

from __future__ import annotations

import pytest

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
