"""The configuration chapter's tables, with their Default and Allowed cells written from the rows.

Each table in docs/guide/10-configuration.md has the columns Variable, Default, Allowed and
Purpose. The Purpose is prose a person writes; Default and Allowed come from the row named in
the first cell, so the guide cannot state a default or a bound the code does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

from ragplatform.settings_tables import BASE_DIR, ROWS, rows_by_name
from ragplatform.settings_tables.ingestion import MIB
from ragplatform.settings_tables.rows import Row

GUIDE = BASE_DIR / "docs" / "guide" / "10-configuration.md"
HEADER = "| Variable | Default | Allowed | Purpose |"
RULE = "|---|---|---|---|"

_CELL_SPLIT = re.compile(r"\s*\|\s*")


def default_text(row: Row) -> str:
    if row.shown_default:
        return row.shown_default
    value = row.default
    match row.kind:
        case "bool":
            return "true" if value else "false"
        case "int" if row.name.endswith("_BYTES") and value % MIB == 0:
            return f"{value // MIB} MiB"
        case "int":
            return str(value)
        case "float":
            return f"{value:g}"
        case "list":
            return ", ".join(value) or "(none)"
        case "path":
            return f"`{_path_shown(value)}`"
        case _:
            return f"`{value}`" if value else "(none)"


def _path_shown(spec: str) -> str:
    if spec.startswith("~"):
        return spec
    if spec.startswith("{"):
        return spec[1:].replace("}", "", 1)
    return f"./{spec}"


def allowed_text(row: Row) -> str:
    text = row.shown_allowed or _allowed_by_kind(row)
    return f"{text}; {row.also}" if row.also else text


def _allowed_by_kind(row: Row) -> str:
    match row.kind:
        case "bool":
            return "true or false"
        case "int":
            return f"at least {row.minimum:g}"
        case "float":
            return f"{row.minimum:g} to {row.maximum:g}"
        case "choice":
            return ", ".join(f"`{choice}`" for choice in row.choices)
        case "list":
            return "comma-separated"
        case "path":
            return "a folder"
        case "secret":
            return f"text, or a file named by {row.name}_FILE"
        case _:
            return "text"


def secret_files() -> dict[str, Row]:
    """NAME_FILE for every secret: the file the secret may be read from instead."""
    return {f"{row.name}_FILE": row for row in ROWS if row.kind == "secret"}


def _cells(line: str) -> list[str]:
    return _CELL_SPLIT.split(line.strip().strip("|").strip())


def guide_variables(text: str) -> list[str]:
    """The variable named in the first cell of every table row, in order."""
    names = {*rows_by_name(), *secret_files()}
    return [
        cells[0]
        for line in text.splitlines()
        if line.startswith("| ") and (cells := _cells(line))[0] in names
    ]


def _row_line(line: str) -> str:
    cells = _cells(line)
    name, purpose = cells[0], cells[-1]
    if name in secret_files():
        default, allowed = "(none)", "a readable file"
    else:
        row = rows_by_name()[name]
        default, allowed = default_text(row), allowed_text(row)
    return f"| {name} | {default} | {allowed} | {purpose} |"


def guide_rendered(text: str) -> str:
    """The guide with every settings table in four columns and its generated cells fresh."""
    names = {*rows_by_name(), *secret_files()}
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("| Variable |"):
            line = HEADER
        elif line.startswith("|---") and out and out[-1] == HEADER:
            line = RULE
        elif line.startswith("| ") and _cells(line)[0] in names:
            line = _row_line(line)
        out.append(line)
    return "\n".join(out) + "\n"


def guide_write(*, path: Path = GUIDE, check: bool = False) -> bool:
    """Whether the guide was already up to date; rewrites it unless `check`."""
    text = path.read_text(encoding="utf-8")
    fresh = guide_rendered(text)
    if fresh != text and not check:
        path.write_text(fresh, encoding="utf-8")
    return fresh == text
