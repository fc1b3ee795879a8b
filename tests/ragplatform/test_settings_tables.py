"""The settings tables: read as the settings were, and typed for mypy."""

from __future__ import annotations

from pathlib import Path
from typing import get_type_hints

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from ragplatform.settings_tables import ROWS, names, setting_read
from ragplatform.settings_tables.rows import PYTHON_TYPES, Row, path_default, row_read

SETTINGS_SOURCE = (Path(settings.BASE_DIR) / "ragplatform" / "settings.py").read_text("utf-8")
BOUNDED = [row for row in ROWS if row.kind in {"int", "float"}]


def test_names_declares_every_global_with_its_type() -> None:
    declared = get_type_hints(names)
    expected = {row.target: PYTHON_TYPES[row.kind] for row in ROWS if row.target}
    assert declared == expected


@pytest.mark.parametrize("row", [row for row in ROWS if row.target], ids=lambda row: row.name)
def test_settings_hold_every_global_with_its_type(row: Row) -> None:
    runtime_type = {"list": list}.get(row.kind, PYTHON_TYPES[row.kind])
    assert isinstance(getattr(settings, str(row.target)), runtime_type)  # type: ignore[arg-type]


@pytest.mark.parametrize("row", [row for row in ROWS if not row.target], ids=lambda row: row.name)
def test_settings_read_every_row_that_sets_no_global(row: Row) -> None:
    assert f'setting_read("{row.name}")' in SETTINGS_SOURCE


def test_globals_keep_their_names() -> None:
    assert len({row.target for row in ROWS if row.target}) == len([r for r in ROWS if r.target])
    assert len({row.name for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_defaults_are_allowed(row: Row) -> None:
    if row.minimum is not None:
        assert row.default >= row.minimum
    if row.maximum is not None:
        assert row.default <= row.maximum
    if row.kind == "choice":
        assert row.default in row.choices


def _out_of_bounds(row: Row) -> str:
    if row.maximum is not None:
        return str(row.maximum * 2 + 1)
    assert row.minimum is not None
    return str(int(row.minimum) - 1)


@pytest.mark.parametrize("row", BOUNDED, ids=lambda row: row.name)
def test_a_value_out_of_bounds_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, row: Row
) -> None:
    monkeypatch.setenv(row.name, _out_of_bounds(row))
    with pytest.raises(ImproperlyConfigured, match=row.name):
        row_read(row, read={}, base_dir=Path("/project"))


@pytest.mark.parametrize(
    "row", [row for row in ROWS if row.kind in {"choice", "bool"}], ids=lambda row: row.name
)
def test_a_word_outside_the_choices_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, row: Row
) -> None:
    monkeypatch.setenv(row.name, "perhaps")
    with pytest.raises(ImproperlyConfigured, match=row.name):
        row_read(row, read={}, base_dir=Path("/project"))


def test_an_unset_row_reads_as_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_TURN_LEASE_S", raising=False)
    assert setting_read("RAG_TURN_LEASE_S") == 10.0


def test_folder_defaults_are_under_the_project_home_or_another_folder() -> None:
    read = {"RAG_DATA_DIR": Path("/data")}
    assert path_default(".data", read=read, base_dir=Path("/project")) == Path("/project/.data")
    assert path_default("{RAG_DATA_DIR}/media", read=read, base_dir=Path("/p")) == Path(
        "/data/media"
    )
    assert path_default("~/x", read=read, base_dir=Path("/p")) == Path.home() / "x"
