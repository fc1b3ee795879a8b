"""An admin uploads documents through the real admin pages in a real browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import LazySettings
from playwright.sync_api import Page, expect

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Document, DocumentStatus
from apps.corpus.uploads.batches import document_schedule
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _open_upload_page(page: Page) -> None:
    page.get_by_role("link", name="Documents", exact=True).first.click()
    page.get_by_role("link", name="Upload documents").click()
    expect(page.get_by_role("heading", name="Upload documents")).to_be_visible()


def test_upload_two_files_then_an_unsupported_one(
    admin_page: Page, e2e_settings: CountingEmbedder, tmp_path: Path
) -> None:
    page = admin_page
    guide = tmp_path / "leave.md"
    guide.write_text("# Leave policy\n\nEmployees take twenty-six days of leave a year.\n")
    notes = tmp_path / "vpn.txt"
    notes.write_text("The VPN uses WireGuard. Ask the help desk for a configuration file.\n")

    _open_upload_page(page)
    page.get_by_label("New collection").fill("Handbook")
    page.get_by_label("Files").set_input_files([guide, notes])
    page.get_by_role("button", name="Upload", exact=True).click()

    expect(page.locator(".messagelist .success")).to_have_text("2 queued, 0 unchanged")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="leave.md").locator(".field-status_badge")).to_have_text("Ready")
    expect(rows.filter(has_text="vpn.txt").locator(".field-status_badge")).to_have_text("Ready")
    assert e2e_settings.passages_embedded >= 2
    if target := os.environ.get("E2E_ADMIN_SCREENSHOT"):
        page.screenshot(path=target, full_page=True)

    exe = tmp_path / "virus.exe"
    exe.write_bytes(b"MZ\x90\x00")
    _open_upload_page(page)
    page.get_by_label("Collection:", exact=True).select_option(label="Handbook")
    page.get_by_label("Files").set_input_files(exe)
    page.get_by_role("button", name="Upload", exact=True).click()

    refusal = page.locator(".messagelist .error")
    expect(refusal).to_contain_text("0 queued, 0 unchanged, 1 refused: virus.exe:")
    expect(refusal).to_contain_text('Files of type ".exe" are not supported')
    expect(page.locator("#result_list tbody tr")).to_have_count(2)


def test_upload_form_keeps_the_chosen_files_after_an_error(
    admin_page: Page, e2e_settings: CountingEmbedder, tmp_path: Path
) -> None:
    page = admin_page
    CollectionFactory.create(name="Handbook")
    guide = tmp_path / "leave.md"
    guide.write_text("# Leave policy\n\nEmployees take twenty-six days of leave a year.\n")
    notes = tmp_path / "vpn.txt"
    notes.write_text("The VPN uses WireGuard. Ask the help desk for a configuration file.\n")

    _open_upload_page(page)
    collection = page.get_by_label("Collection:", exact=True)
    expect(collection.locator("option:checked")).to_have_text("Handbook")  # not "(new collection)"
    page.get_by_label("New collection").fill("Handbook 2")  # and a new one: not allowed
    page.get_by_label("Files").set_input_files([guide, notes])
    page.get_by_role("button", name="Upload", exact=True).click()

    expect(page.locator(".errornote")).to_be_visible()
    expect(page.get_by_text("not both")).to_be_visible()
    expect(page.get_by_label("leave.md (")).to_be_checked()
    expect(page.get_by_label("vpn.txt (")).to_be_checked()

    page.get_by_label("New collection").fill("")
    page.get_by_role("button", name="Upload", exact=True).click()

    expect(page.locator(".messagelist .success")).to_have_text("2 queued, 0 unchanged")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="leave.md").locator(".field-status_badge")).to_have_text("Ready")


def test_progress_moves_in_the_list_without_a_reload(
    admin_page: Page, embedder: CountingEmbedder, settings: LazySettings
) -> None:
    # The database task backend and no worker: the document waits until the test moves it.
    settings.RAG_ADMIN_PROGRESS_POLL_S = 0.5
    page = admin_page
    document = document_submit(
        collection=CollectionFactory.create(name="Handbook"),
        filename="leave.md",
        data=b"# Leave policy\n\nEmployees take twenty-six days of leave a year.\n",
    ).document
    document_schedule(document=document, wait=False)  # queued; nobody runs it yet

    page.get_by_role("link", name="Documents", exact=True).first.click()
    row = page.locator("#result_list tbody tr").filter(has_text="leave.md")
    expect(row.locator(".field-status_badge")).to_have_text("Pending")
    expect(row.locator(".field-progress_bar")).to_have_text("0%")
    page.evaluate("window.notReloaded = true")

    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.PROCESSING, progress=40)
    expect(row.locator(".field-status_badge")).to_have_text("Processing")
    expect(row.locator(".field-progress_bar")).to_have_text("40%")

    document_process(document_id=document.pk)
    expect(row.locator(".field-status_badge")).to_have_text("Ready")
    expect(row.locator(".field-progress_bar")).to_have_text("100%")
    assert page.evaluate("window.notReloaded") is True
