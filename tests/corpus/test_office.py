"""PowerPoint, Excel and CSV: slides and sheets as sections, tables as header and rows."""

from __future__ import annotations

import pytest

from apps.corpus.ingestion.chunking import chunk_blocks
from apps.corpus.parsing import CorruptDocument, DocumentTooLarge, EncryptedDocument, parse_document
from apps.corpus.parsing import sheets as sheets_module
from apps.corpus.parsing.detect import OLE_MAGIC
from apps.corpus.parsing.types import HEAD_ROW, ROW
from tests.corpus.office_files import pptx_bytes, xlsx_bytes

SLIDES = [
    ("Annual Leave", "Employees take twenty-six days a year.", "Say it twice: managers forget."),
    ("Travel", "Trains are booked through the office.", "Mention the rail card."),
]
RATES = [["City", "Daily allowance"], ["Tehran", "40 EUR"], ["Berlin", "60 EUR"]]


def test_slides_in_order_with_titles_as_headings_notes_and_tables() -> None:
    parsed = parse_document(filename="deck.pptx", data=pptx_bytes(SLIDES, table=RATES))
    texts = [(b.page, b.heading, b.text, b.kind) for b in parsed.blocks]
    assert texts[0] == (1, "Annual Leave", "Employees take twenty-six days a year.", "text")
    assert (1, "Annual Leave > Notes", "Say it twice: managers forget.", "text") in texts
    assert texts.index((2, "Travel", "Trains are booked through the office.", "text")) > 1
    assert (3, "Rates", "City | Daily allowance", HEAD_ROW) in texts
    assert (3, "Rates", "Berlin | 60 EUR", ROW) in texts
    assert parsed.title == "Annual Leave"


def test_an_encrypted_presentation_is_refused_as_protected() -> None:
    # Office writes a password-protected .pptx as an OLE compound file.
    with pytest.raises(EncryptedDocument, match="password-protected"):
        parse_document(filename="secret.pptx", data=OLE_MAGIC + b"\x00" * 512)


def test_a_word_document_named_xlsx_is_refused_by_its_parts() -> None:
    with pytest.raises(CorruptDocument, match=r"xl/workbook\.xml is missing"):
        parse_document(filename="x.xlsx", data=pptx_bytes(SLIDES))


def test_each_sheet_is_a_section_with_its_header_row() -> None:
    data = xlsx_bytes({"Allowances": RATES, "Contacts": [["Name", "Phone"], ["Sara", "0912"]]})
    parsed = parse_document(filename="book.xlsx", data=data)
    rows = [(b.heading, b.text, b.kind) for b in parsed.blocks]
    assert rows[0] == ("Allowances", "City | Daily allowance", HEAD_ROW)
    assert ("Contacts", "Sara | 0912", ROW) in rows


def test_values_not_formulas_are_indexed_and_empty_cells_cost_nothing() -> None:
    rows: list[list[object]] = [["Item", "Cost"], ["Laptop", 1200], ["Total", "=SUM(B2:B2)"]]
    data = xlsx_bytes({"Budget": rows}, empty_cells=200_000)
    parsed = parse_document(filename="budget.xlsx", data=data)
    text = " ".join(b.text for b in parsed.blocks)
    assert "Laptop | 1200" in text and "=SUM" not in text
    # openpyxl writes no cached value for the formula: the cell reads as empty, not as code.
    assert [b.text for b in parsed.blocks][-1] == "Total"


def test_a_long_sheet_repeats_its_header_in_every_chunk() -> None:
    rows = [["Employee", "Office"]] + [[f"Person {i}", f"Room {i}"] for i in range(200)]
    parsed = parse_document(filename="staff.xlsx", data=xlsx_bytes({"Staff": rows}))
    drafts = chunk_blocks(title=parsed.title, blocks=parsed.blocks, max_words=60)
    assert len(drafts) > 3
    assert all(d.text.startswith("| Employee | Office |\n|---|---|") for d in drafts)


def test_too_many_rows_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sheets_module, "MAX_SHEET_ROWS", 2)
    with pytest.raises(DocumentTooLarge, match="more than 2 rows"):
        parse_document(filename="big.xlsx", data=xlsx_bytes({"S": RATES}))


def test_a_csv_is_a_table_of_header_and_rows_in_its_own_delimiter() -> None:
    data = b"City;Daily allowance\nTehran;40 EUR\nBerlin;60 EUR\n"
    parsed = parse_document(filename="rates.csv", data=data)
    assert [(b.text, b.kind) for b in parsed.blocks] == [
        ("City | Daily allowance", HEAD_ROW),
        ("Tehran | 40 EUR", ROW),
        ("Berlin | 60 EUR", ROW),
    ]
