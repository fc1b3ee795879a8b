"""The admin's document list refreshes every column it shows when a document finishes while the
page is open (issue #30, item 3: "Chunks 0" until a reload)."""

from __future__ import annotations

import pytest
from django.conf import LazySettings
from playwright.sync_api import Page, expect

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Document
from apps.corpus.uploads.batches import document_schedule
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db(transaction=True)
TEXT = "# Leave policy\n\n" + "".join(
    f"## Part {n}\n\nEmployees take twenty-six days of leave a year, rule {n}.\n\n"
    for n in range(12)
)


def test_a_document_finishing_while_the_list_is_open_shows_its_chunk_count(
    admin_page: Page, embedder: CountingEmbedder, settings: LazySettings
) -> None:
    settings.RAG_ADMIN_PROGRESS_POLL_S = 0.5
    page = admin_page
    document = document_submit(
        collection=CollectionFactory.create(name="Handbook"),
        filename="leave.md",
        data=TEXT.encode(),
    ).document
    document_schedule(document=document, wait=False)  # queued; nobody runs it yet

    page.get_by_role("link", name="Documents", exact=True).first.click()
    row = page.locator("#result_list tbody tr").filter(has_text="leave.md")
    expect(row.locator(".field-chunks_link")).to_have_text("0")
    page.evaluate("window.notReloaded = true")

    document_process(document_id=document.pk)
    chunks = Document.objects.get(pk=document.pk).chunk_count
    assert chunks > 0
    expect(row.locator(".field-status_badge")).to_have_text("Ready")
    expect(row.locator(".field-chunks_link")).to_have_text(str(chunks))
    expect(row.locator(".field-chunks_link a")).to_have_attribute(
        "href", f"/admin/corpus/chunk/?document={document.pk}"
    )
    expect(row.locator(".field-language")).to_have_text("en")
    assert page.evaluate("window.notReloaded") is True
