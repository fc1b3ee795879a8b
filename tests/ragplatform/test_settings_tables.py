"""The settings tables: read as the settings, typed for mypy, and the guide written from them."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import get_type_hints

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from ragplatform.settings_tables import ROWS, names, setting_read
from ragplatform.settings_tables.guide import GUIDE, guide_rendered, guide_variables, secret_files
from ragplatform.settings_tables.rows import PYTHON_TYPES, Row, path_default, row_read

SETTINGS_SOURCE = (Path(settings.BASE_DIR) / "ragplatform" / "settings.py").read_text("utf-8")
BOUNDED = [row for row in ROWS if row.kind in {"int", "float"}]


def _guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def test_the_guide_is_written_from_the_tables() -> None:
    assert guide_rendered(_guide()) == _guide(), (
        f"{GUIDE.name}'s Default or Allowed cells are stale: run `python manage.py settings_guide`"
    )


def test_the_guide_check_command_passes() -> None:
    call_command("settings_guide", "--check")


def test_every_row_is_documented_once() -> None:
    counts = Counter(guide_variables(_guide()))
    assert {row.name for row in ROWS if counts[row.name] != 1} == set()


def test_every_documented_variable_is_a_row() -> None:
    # guide_variables only knows rows, so look at every first cell that looks like a variable.
    first_cells = re.findall(r"^\| ([A-Z][A-Z0-9_]+) \|", _guide(), flags=re.MULTILINE)
    known = {row.name for row in ROWS} | set(secret_files())
    assert set(first_cells) - known == set()
    assert Counter(guide_variables(_guide())) == Counter(first_cells)


def test_purposes_leave_defaults_and_bounds_to_their_columns() -> None:
    # A default or a bound written in the prose would go stale unseen when a row changes.
    for line in _guide().splitlines():
        if re.match(r"^\| [A-Z][A-Z0-9_]+ \|", line):
            purpose = line.rsplit(" | ", 1)[-1]
            assert not re.search(r"\bDefault\b|\bBetween [\d.]+ and [\d.]+", purpose), line


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
