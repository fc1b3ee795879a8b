"""The README and the guide describe commands, flags and settings that really exist.

Every `manage.py NAME ...` in a code span or code block must name a real command, and every
`--flag` written after it must be one of that command's options; every environment variable
the settings read must be documented in the configuration chapter.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parent.parent
DOCS = (
    ROOT / "README.md",
    ROOT / "Makefile",
    ROOT / "benchmarks" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
)
CONFIGURATION = ROOT / "docs" / "guide" / "10-configuration.md"
# Inside a code span or on a line of a code block: up to the closing backtick or the line's end.
INVOCATION = re.compile(r"manage\.py ([a-z_]+)([^`\n]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


@cache
def documented() -> dict[str, set[str]]:
    """Command name -> the flags the documents write after it."""
    found: dict[str, set[str]] = {}
    for path in DOCS:
        for name, rest in INVOCATION.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, set()).update(FLAG.findall(rest))
    return found


def _options(name: str) -> set[str]:
    parser = load_command_class(get_commands()[name], name).create_parser("manage.py", name)
    return {option for action in parser._actions for option in action.option_strings}


def test_the_documents_name_the_commands_people_run() -> None:
    # If this shrinks, a parser change above stopped finding invocations.
    assert {"serve", "ingest", "ask", "evaluate_router", "analytics_refresh"} <= set(documented())


@pytest.mark.parametrize("name", sorted(documented()))
def test_every_documented_command_exists(name: str) -> None:
    assert name in get_commands(), f"the docs mention `manage.py {name}`, which is no command"


@pytest.mark.parametrize("name", sorted(documented()))
def test_every_documented_flag_exists(name: str) -> None:
    if name not in get_commands():
        pytest.skip("reported by test_every_documented_command_exists")
    unknown = documented()[name] - _options(name)
    assert not unknown, f"the docs give `manage.py {name}` options it does not have: {unknown}"


@pytest.mark.parametrize("name", sorted(documented()))
def test_every_documented_command_prints_its_help(name: str) -> None:
    if name not in get_commands():
        pytest.skip("reported by test_every_documented_command_exists")
    command = load_command_class(get_commands()[name], name)
    out = StringIO()
    command.create_parser("manage.py", name).print_help(out)
    assert out.getvalue().startswith(f"usage: manage.py {name}")


def _settings_variables() -> set[str]:
    """Every variable of the settings tables, and any env_*("NAME", ...) call left in settings.py."""
    from ragplatform.settings_tables import ROWS

    tree = ast.parse((ROOT / "ragplatform" / "settings.py").read_text(encoding="utf-8"))
    return {row.name for row in ROWS} | {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("env_")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def test_settings_are_read_from_variables() -> None:
    assert {"DATABASE_URL", "RAG_TURN_LEASE_S", "RAG_EMBEDDER", "DJANGO_SECRET_KEY"} <= (
        _settings_variables()
    )


@pytest.mark.parametrize("variable", sorted(_settings_variables()))
def test_every_setting_is_documented(variable: str) -> None:
    text = CONFIGURATION.read_text(encoding="utf-8")
    assert re.search(rf"\b{variable}\b", text), f"{variable} is not in {CONFIGURATION.name}"


def test_every_supported_file_ending_is_documented() -> None:
    from apps.corpus.parsing import SUPPORTED_SUFFIXES

    guide = (ROOT / "docs" / "guide" / "07-ingesting-documents.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for suffix in SUPPORTED_SUFFIXES:
        assert re.search(rf"{re.escape(suffix)}\b", guide), f"{suffix} is not in the guide"
        assert f"`{suffix}`" in readme, f"{suffix} is not in the README"
