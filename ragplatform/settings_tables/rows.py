"""One row of a settings table: an environment variable, its type, default, bounds and doc.

A row is read through the typed helpers of ragplatform/env.py, so a bad value stops start-up
with an error that names the variable, exactly as a hand-written `env_int(...)` call would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragplatform.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_path,
    env_secret,
    env_str,
)

Kind = Literal["bool", "int", "float", "str", "choice", "list", "path", "secret"]
# The Python type each kind reads as: what ragplatform/settings_tables/names.py declares.
PYTHON_TYPES: dict[Kind, object] = {
    "bool": bool,
    "int": int,
    "float": float,
    "str": str,
    "choice": str,
    "list": list[str],
    "path": Path,
    "secret": str,
}
# The module global a row sets when it names none: the variable's own name.
SAME_NAME = ""


@dataclass(frozen=True)
class Row:
    name: str
    kind: Kind
    default: Any
    doc: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    # The settings.py global it sets; None when settings.py reads it itself (setting_read),
    # because its value goes into a derived setting or is only read in some configurations.
    setting: str | None = SAME_NAME
    # The guide's Default and Allowed cells, where the rendered value alone would mislead.
    shown_default: str = ""
    shown_allowed: str = ""
    # A bound that involves other rows, checked in settings.py: added to the Allowed cell.
    also: str = ""

    @property
    def target(self) -> str | None:
        return self.name if self.setting == SAME_NAME else self.setting


def row_read(row: Row, *, read: Mapping[str, object], base_dir: Path) -> Any:
    """The row's value from the environment; `read` holds the rows read before it, by name."""
    match row.kind:
        case "bool":
            return env_bool(row.name, default=row.default)
        case "int":
            minimum = None if row.minimum is None else int(row.minimum)
            return env_int(row.name, row.default, minimum=minimum)
        case "float":
            assert row.minimum is not None and row.maximum is not None
            return env_float(row.name, row.default, low=row.minimum, high=row.maximum)
        case "choice":
            return env_choice(row.name, row.default, row.choices)
        case "list":
            return env_list(row.name, row.default)
        case "path":
            return env_path(row.name, path_default(row.default, read=read, base_dir=base_dir))
        case "secret":
            return env_secret(row.name) or row.default
        case _:
            return env_str(row.name, row.default)


def path_default(spec: str, *, read: Mapping[str, object], base_dir: Path) -> Path:
    """`~/x` under the home folder, `{RAG_DATA_DIR}/x` under that row's value, else the project's."""
    if spec.startswith("~"):
        return Path(spec).expanduser()
    if spec.startswith("{"):
        name, rest = spec[1:].split("}/", 1)
        return Path(str(read[name])) / rest
    return base_dir / spec


def Bool(name: str, default: bool, doc: str, **extra: Any) -> Row:
    return Row(name, "bool", default, doc, **extra)


def Int(name: str, default: int, doc: str, *, minimum: int, **extra: Any) -> Row:
    return Row(name, "int", default, doc, minimum=minimum, **extra)


def Float(name: str, default: float, doc: str, *, low: float, high: float, **extra: Any) -> Row:
    return Row(name, "float", default, doc, minimum=low, maximum=high, **extra)


def Text(name: str, default: str, doc: str, **extra: Any) -> Row:
    return Row(name, "str", default, doc, **extra)


def Choice(name: str, choices: tuple[str, ...], doc: str, **extra: Any) -> Row:
    """The first choice is the default."""
    return Row(name, "choice", choices[0], doc, choices=choices, **extra)


def List(name: str, default: tuple[str, ...], doc: str, **extra: Any) -> Row:
    return Row(name, "list", default, doc, **extra)


def Folder(name: str, default: str, doc: str, **extra: Any) -> Row:
    return Row(name, "path", default, doc, **extra)


def Secret(name: str, doc: str, **extra: Any) -> Row:
    """From NAME or the file NAME_FILE names; never written in code, so no default but ''."""
    return Row(name, "secret", "", doc, **extra)
