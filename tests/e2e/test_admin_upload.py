"""An admin uploads documents through the real admin pages in a real browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import CountingEmbedder

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
