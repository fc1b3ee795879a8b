"""The settings that are plain environment reads, as one declarative table per area.

Each row names an environment variable, its type, default, bounds and a one-line doc;
ragplatform/settings.py sets them as module globals in one loop (`settings_from_environment`)
and keeps only what is not a plain read. The guide's Default and Allowed columns
(docs/guide/10-configuration.md) are written from these rows by `manage.py settings_guide`,
and names.py declares the globals' types for mypy; tests check both against the rows.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from ragplatform.settings_tables import (
    analytics,
    answers,
    conversations,
    database,
    identity,
    ingestion,
    providers,
    reach,
    retrieval,
    sources,
    streaming,
    web,
    workers,
)
from ragplatform.settings_tables.rows import Row, row_read

# In reading order: a folder's default may name a folder read before it (RAG_DATA_DIR).
AREAS: dict[str, tuple[Row, ...]] = {
    "web and security": web.ROWS,
    "database": database.ROWS,
    "task workers": workers.ROWS,
    "ingestion": ingestion.ROWS,
    "sources": sources.ROWS,
    "providers and models": providers.ROWS,
    "answers": answers.ROWS,
    "retrieval": retrieval.ROWS,
    "answers in flight": streaming.ROWS,
    "conversations": conversations.ROWS,
    "analytics": analytics.ROWS,
    "other clients": reach.ROWS,
    "identity": identity.ROWS,
}
ROWS: tuple[Row, ...] = tuple(row for rows in AREAS.values() for row in rows)
BASE_DIR = Path(__file__).resolve().parent.parent.parent


def settings_from_environment(*, base_dir: Path = BASE_DIR) -> dict[str, Any]:
    """Every row that sets a global, read in table order: {global name: value}."""
    read: dict[str, object] = {}
    values: dict[str, Any] = {}
    for row in ROWS:
        if row.target is None:
            continue
        read[row.name] = values[row.target] = row_read(row, read=read, base_dir=base_dir)
    return values


def setting_read(name: str) -> Any:
    """One row that settings.py reads itself (a derived setting, or read only when needed)."""
    row = rows_by_name()[name]
    assert row.kind != "path", "a folder's default may depend on other rows"
    return row_read(row, read={}, base_dir=BASE_DIR)


@cache
def rows_by_name() -> dict[str, Row]:
    return {row.name: row for row in ROWS}
