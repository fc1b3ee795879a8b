"""A 2,000-page scan: OCR stops at the pages-per-document limit and records every page it left,
the document's progress moves while its pages are read, and a document submitted meanwhile
is processed without waiting for it."""

from __future__ import annotations

import threading

import pytest
from django.conf import LazySettings
from django.db import connections
from PIL import Image

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Document, DocumentStatus
from tests.conftest import CountingEmbedder
from tests.corpus import files, scans
from tests.factories import CollectionFactory

PAGES = 2000
LEAVE = "Employees may take twenty-six days of annual leave a year."
NOTE = b"# Travel\n\nTravel costs are repaid within ten working days of the claim.\n"


@pytest.fixture(scope="module")
def long_scan() -> bytes:
    """A real first page, rendered and wrapped as a scanner would, then 1,999 blank pages."""
    first = scans.rendered_pages(files.title_page_pdf("Archive Index", LEAVE), dpi=100)[0]
    blank = Image.new("L", (40, 40), color=255)
    return scans.image_only_pdf([first] + [blank] * (PAGES - 1), dpi=100)


@pytest.mark.django_db(transaction=True)
def test_a_2000_page_scan_stops_at_the_ocr_limit_and_blocks_no_other_document(
    long_scan: bytes, settings: LazySettings
) -> None:
    settings.RAG_OCR_MAX_PAGES = 1
    collection = CollectionFactory.create()
    scan = document_submit(collection=collection, filename="archive.pdf", data=long_scan).document
    halfway, release = threading.Event(), threading.Event()
    seen: list[int] = []

    def progress(percent: int) -> None:
        seen.append(percent)
        if percent == 10:  # half of the pages read: hold the scan there
            halfway.set()
            release.wait(timeout=120)

    def process_scan() -> None:
        try:
            document_process(document_id=scan.pk, embedder=CountingEmbedder(), on_progress=progress)
        finally:
            connections.close_all()

    worker = threading.Thread(target=process_scan)
    worker.start()
    try:
        assert halfway.wait(timeout=60), "the scan's progress never reached half its pages"
        held = Document.objects.get(pk=scan.pk)
        assert held.status == DocumentStatus.PROCESSING and held.progress == 10
        # Another document, submitted while the scan is being read, is processed meanwhile.
        note = document_submit(collection=collection, filename="travel.md", data=NOTE).document
        done = document_process(document_id=note.pk, embedder=CountingEmbedder()).document
        assert done.status == DocumentStatus.READY
    finally:
        release.set()
        worker.join(timeout=300)

    scan.refresh_from_db()
    assert scan.status == DocumentStatus.READY and scan.progress == 100
    assert scan.ocr_pages == 1 and "twenty-six days" in scan.chunks.get().text
    assert len(scan.unread_pages) == PAGES - 1
    assert scan.unread_pages[0] == {
        "page": 2,
        "reason": "over the limit of 1 OCR pages per document",
    }
    assert scan.unread_pages[-1]["page"] == PAGES
    assert seen[:10] == list(range(6, 16))  # 5% at the claim, one step per 10% of the pages
