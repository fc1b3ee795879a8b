"""Spreadsheets: Excel (.xlsx) via openpyxl read-only, and CSV via the csv module.

Each sheet is a section under its name; its first non-empty row is the header and every
other non-empty row a table row. Cached values are read, never formulas (a formula nobody
computed reads as empty). Chunking repeats the header in every chunk of a table, so a chunk
of rows stands alone.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

import openpyxl

from .blocks import BlockCollector, collapse_whitespace
from .decode import decode_text
from .office import package_size_check
from .types import HEAD_ROW, ROW, CorruptDocument, DocumentTooLarge, Extracted

# Non-empty rows read from one file at most (read at call time so tests can lower it).
MAX_SHEET_ROWS = 100_000
CELL_SEPARATOR = " | "
SHEET_LEVEL = 1


def parse_xlsx(data: bytes) -> Extracted:
    package_size_check(data, kind="spreadsheet")
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise CorruptDocument("The spreadsheet is damaged and could not be read") from exc
    collector = BlockCollector()
    budget = _RowBudget()
    try:
        for sheet in workbook.worksheets:
            collector.heading(SHEET_LEVEL, sheet.title)
            _add_rows(sheet.iter_rows(values_only=True), collector, budget)
    except DocumentTooLarge:
        raise
    except Exception as exc:
        raise CorruptDocument("The spreadsheet is damaged and could not be read") from exc
    finally:
        workbook.close()
    title = collapse_whitespace(workbook.properties.title or "") or None
    return Extracted(title=title, blocks=collector.blocks)


def parse_csv(data: bytes) -> Extracted:
    text = decode_text(data)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], ",;\t|")
    except csv.Error:
        dialect = csv.excel  # One column, or too little to tell: commas.
    collector = BlockCollector()
    try:
        _add_rows(csv.reader(io.StringIO(text), dialect), collector, _RowBudget())
    except csv.Error as exc:
        raise CorruptDocument(f"The CSV file could not be read ({exc})") from exc
    return Extracted(title=None, blocks=collector.blocks)


class _RowBudget:
    def __init__(self) -> None:
        self.rows = 0

    def take(self) -> None:
        self.rows += 1
        if self.rows > MAX_SHEET_ROWS:
            raise DocumentTooLarge(
                f"The spreadsheet has more than {MAX_SHEET_ROWS:,} rows with values; "
                "split it and upload the parts"
            )


def _add_rows(
    rows: Iterable[Sequence[object]], collector: BlockCollector, budget: _RowBudget
) -> None:
    header = True
    for row in rows:
        cells = [_cell(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()  # Trailing empty cells: a sheet's used range is often far wider.
        if not any(cells):
            continue
        budget.take()
        collector.add(CELL_SEPARATOR.join(cells), kind=HEAD_ROW if header else ROW)
        header = False


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return collapse_whitespace(str(value).replace("|", "/"))
