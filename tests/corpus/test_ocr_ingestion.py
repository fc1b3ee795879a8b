"""Scanned documents through ingestion and the real turn path: OCR on the worker's side,
confidence kept on the chunks, unread pages recorded while the rest is kept."""

from __future__ import annotations

import pytest
from django.conf import LazySettings

from apps.corpus.documents.reading import chunk_payload, chunk_view_get, document_blocks_read
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.models import Document, DocumentStatus
from tests.answers.fakes import providers_fake, turn_collected
from tests.conftest import CountingEmbedder
from tests.corpus import files, scans
from tests.corpus.office_files import xlsx_bytes

pytestmark = pytest.mark.django_db

LEAVE = "Employees may take twenty-six days of annual leave a year."
TRAVEL = "Travel costs are repaid within ten working days of the claim."


@pytest.fixture(scope="module")
def english_scan() -> bytes:
    return scans.scanned(files.outline_pdf([("Annual Leave", LEAVE), ("Travel Expenses", TRAVEL)]))


def _ingest(embedder: CountingEmbedder, filename: str, data: bytes) -> Document:
    collection = collection_get_or_create(name="Scans", public=True)
    submitted = document_submit(collection=collection, filename=filename, data=data)
    return document_process(document_id=submitted.document.pk, embedder=embedder).document


def test_a_question_is_answered_from_a_scanned_pdf(
    embedder: CountingEmbedder, english_scan: bytes
) -> None:
    document = _ingest(embedder, "leave-scan.pdf", english_scan)
    assert document.status == DocumentStatus.READY and document.ocr_pages == 2
    chunks = list(document.chunks.all())
    assert chunks and all(c.ocr_confidence is not None and c.ocr_confidence > 80 for c in chunks)

    _, events = turn_collected(providers_fake(embedder), "how many days of annual leave a year?")
    cited = [e["data"] for e in events if e["type"] == "citation"]
    assert cited and cited[0]["document"] == document.pk
    assert "twenty-six days" in cited[0]["snippet"]


def test_the_preview_and_the_read_page_mark_ocr_text(
    embedder: CountingEmbedder, english_scan: bytes
) -> None:
    document = _ingest(embedder, "leave-scan.pdf", english_scan)
    view = chunk_view_get(document=document, index=0)
    assert view is not None
    payload = chunk_payload(document=document, chunk=view)
    assert isinstance(payload["ocr_confidence"], float) and payload["ocr_confidence"] > 80
    # The read page is a request: it shows the stored OCR text and never runs OCR again.
    blocks = document_blocks_read(document=document, cited_chunk=0)
    assert any("twenty-six days" in b.text for b in blocks) and blocks[0].cited


def test_with_ocr_off_a_scan_fails_saying_why(
    embedder: CountingEmbedder, english_scan: bytes, settings: LazySettings
) -> None:
    settings.RAG_OCR = False
    document = _ingest(embedder, "leave-scan.pdf", english_scan)
    assert document.status == DocumentStatus.FAILED
    assert "OCR is turned off" in document.error_message


def test_pages_over_the_limit_are_recorded_and_the_rest_is_kept(
    embedder: CountingEmbedder, english_scan: bytes, settings: LazySettings
) -> None:
    settings.RAG_OCR_MAX_PAGES = 1
    document = _ingest(embedder, "leave-scan.pdf", english_scan)
    assert document.status == DocumentStatus.READY and document.ocr_pages == 1
    assert document.unread_pages == [
        {"page": 2, "reason": "over the limit of 1 OCR pages per document"}
    ]


def test_a_question_about_one_cell_is_answered_from_its_row_and_header(
    embedder: CountingEmbedder,
) -> None:
    rows = [["City", "Daily allowance"], ["Tehran", "40 EUR"], ["Berlin", "60 EUR"]]
    document = _ingest(embedder, "allowances.xlsx", xlsx_bytes({"Travel allowances": rows}))
    assert document.status == DocumentStatus.READY
    _, events = turn_collected(providers_fake(embedder), "daily allowance in Berlin?")
    cited = [e["data"] for e in events if e["type"] == "citation"]
    assert cited and cited[0]["document"] == document.pk
    assert "Berlin" in cited[0]["snippet"] and "Daily allowance" in cited[0]["snippet"]


def test_a_table_snippet_shows_rows_not_table_syntax(embedder: CountingEmbedder) -> None:
    rows = [["City", "Daily allowance"], ["Tehran", "40 EUR"], ["Berlin", "60 EUR"]]
    _ingest(embedder, "allowances.xlsx", xlsx_bytes({"Travel allowances": rows}))
    _, events = turn_collected(providers_fake(embedder), "daily allowance in Berlin?")
    snippet = next(e["data"]["snippet"] for e in events if e["type"] == "citation")
    assert "| City | Daily allowance |" in snippet and "|---|" not in snippet
