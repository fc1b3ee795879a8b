"""PDFs made by real tools, read by position: a table printed by Chromium kept as rows with
its header, and a Persian page printed by Chromium (its text layer in visual order) restored
to reading order; both asked about through the real turn path."""

from __future__ import annotations

import io

import pytest
from django.conf import LazySettings
from reportlab.pdfgen import canvas

from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.models import Document, DocumentStatus
from apps.corpus.parsing import parse_document
from apps.corpus.parsing.pdf_layout import joining_order, reading_order
from apps.corpus.parsing.types import HEAD_ROW, ROW, TEXT
from apps.corpus.text import normalise_text
from tests.answers.fakes import providers_fake, turn_collected
from tests.conftest import CountingEmbedder
from tests.corpus import scans

TABLE_HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8"><style>
table { border-collapse: collapse } td, th { border: 1px solid #000; padding: 4px }
</style></head><body><h1>Travel Allowances</h1>
<p>Daily allowances are paid for each night away from home.</p>
<table><tr><th>City</th><th>Daily allowance</th><th>Hotel limit</th></tr>
<tr><td>Tehran</td><td>40 EUR</td><td>90 EUR</td></tr>
<tr><td>Berlin</td><td>60 EUR</td><td>140 EUR</td></tr>
<tr><td>Lisbon</td><td>55 EUR</td><td>120 EUR</td></tr></table>
<p>Claims are repaid within ten working days.</p></body></html>"""


@pytest.fixture(scope="module")
def table_pdf() -> bytes:
    return scans.chromium_pdf(TABLE_HTML)


@pytest.fixture(scope="module")
def persian_pdf() -> bytes:
    return scans.chromium_pdf(scans.persian_html())


def test_a_printed_table_is_rows_with_its_header_in_reading_position(table_pdf: bytes) -> None:
    parsed = parse_document(filename="allowances.pdf", data=table_pdf, pdf_table_pages=10)
    kinds = [b.kind for b in parsed.blocks]
    assert kinds == [TEXT, HEAD_ROW, ROW, ROW, ROW, TEXT]
    assert parsed.blocks[1].text == "City | Daily allowance | Hotel limit"
    assert parsed.blocks[3].text == "Berlin | 60 EUR | 140 EUR"
    assert "ten working days" in parsed.blocks[-1].text
    # The table's words are its rows only, never prose lines as well.
    prose = " ".join(b.text for b in parsed.blocks if b.kind == TEXT)
    assert "Berlin" not in prose and "Hotel limit" not in prose


def _bookmarked_table_pdf() -> bytes:
    """ReportLab: two bookmarked headings on one page, a ruled table between them."""
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    for key, title in (("leave", "Annual Leave"), ("travel", "Travel Expenses")):
        page.bookmarkPage(key)
        page.addOutlineEntry(title, key, level=0)
    page.setFont("Helvetica-Bold", 18)
    page.drawString(72, 760, "Annual Leave")
    page.setFont("Helvetica", 11)
    page.grid([72, 200, 330], [720, 700, 680])
    for y, (left, right) in ((706, ("Grade", "Days")), (686, ("Senior", "30"))):
        page.drawString(76, y, left)
        page.drawString(204, y, right)
    page.setFont("Helvetica-Bold", 18)
    page.drawString(72, 640, "Travel Expenses")
    page.setFont("Helvetica", 11)
    page.drawString(72, 620, "Travel costs are repaid within ten working days.")
    page.showPage()
    page.save()
    return buffer.getvalue()


def test_a_table_sits_under_its_bookmark_and_the_next_bookmark_after_it() -> None:
    parsed = parse_document(filename="policy.pdf", data=_bookmarked_table_pdf(), pdf_table_pages=1)
    found = [(b.kind, b.heading, b.text) for b in parsed.blocks]
    assert found == [
        (HEAD_ROW, "Annual Leave", "Grade | Days"),
        (ROW, "Annual Leave", "Senior | 30"),
        (TEXT, "Travel Expenses", "Travel costs are repaid within ten working days."),
    ]


def test_pages_past_the_table_limit_are_read_as_plain_text(table_pdf: bytes) -> None:
    parsed = parse_document(filename="allowances.pdf", data=table_pdf, pdf_table_pages=0)
    assert {b.kind for b in parsed.blocks} == {TEXT}
    assert "Berlin" in " ".join(b.text for b in parsed.blocks)


def test_a_chromium_persian_pdf_reads_in_reading_order(persian_pdf: bytes) -> None:
    parsed = parse_document(filename="leave.pdf", data=persian_pdf)
    text = normalise_text(" ".join(b.text for b in parsed.blocks))
    # Base letters (not presentation forms), the sentence's first word first.
    assert "کارمندان می توانند سالانه بیست و شش روز مرخصی بگیرند." in text
    assert text.index("کارمندان") < text.index("مدیر درخواست را در پنج روز کاری")


def test_joining_forms_tell_visual_from_logical_order() -> None:
    logical = "\ufee3\ufeae\ufea7\ufebb\ufbfd"  # مرخصی as shaped glyphs, in reading order
    assert joining_order(logical) == "logical"
    assert joining_order(logical[::-1]) == "visual"
    # A visual line is reversed, its left-to-right run (a number) kept as it reads.
    assert reading_order(f"42 {logical[::-1]}") == "مرخصی 42"
    assert reading_order(logical) == "مرخصی"
    assert reading_order("Hotel limit 140 EUR") == "Hotel limit 140 EUR"


def _ingest(embedder: CountingEmbedder, filename: str, data: bytes) -> Document:
    collection = collection_get_or_create(name="Printed", public=True)
    submitted = document_submit(collection=collection, filename=filename, data=data)
    return document_process(document_id=submitted.document.pk, embedder=embedder).document


@pytest.mark.django_db
def test_a_question_about_one_pdf_table_cell_is_answered_from_its_row_and_header(
    embedder: CountingEmbedder, table_pdf: bytes, settings: LazySettings
) -> None:
    settings.RAG_PDF_TABLE_MAX_PAGES = 5
    document = _ingest(embedder, "allowances.pdf", table_pdf)
    assert document.status == DocumentStatus.READY
    _, events = turn_collected(providers_fake(embedder), "what is the hotel limit in Berlin?")
    cited = [e["data"] for e in events if e["type"] == "citation"]
    assert cited and cited[0]["document"] == document.pk
    snippet = cited[0]["snippet"]
    assert "Berlin | 60 EUR | 140 EUR" in snippet and "Hotel limit" in snippet


@pytest.mark.django_db
def test_a_question_is_answered_from_a_chromium_persian_pdf(
    embedder: CountingEmbedder, persian_pdf: bytes
) -> None:
    document = _ingest(embedder, "leave.pdf", persian_pdf)
    assert document.status == DocumentStatus.READY
    _, events = turn_collected(providers_fake(embedder), "کارمندان سالانه چند روز مرخصی دارند؟")
    cited = [e["data"] for e in events if e["type"] == "citation"]
    assert cited and cited[0]["document"] == document.pk
    assert "بیست و شش روز مرخصی" in normalise_text(cited[0]["snippet"])
