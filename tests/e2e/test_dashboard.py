"""An analyst's path through the dashboard in a real browser: pick a range, follow a figure to
the turns behind it (the same count), and read why a refused turn was refused."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Page, expect

from tests.analytics.dashboard_world import FIRST, LAST, world_build

pytestmark = pytest.mark.django_db(transaction=True)


def _open_dashboard(page: Page) -> None:
    page.get_by_role("link", name="Analytics", exact=True).first.click()
    page.locator(".app-analytics tr.model-dashboard").get_by_role("link", name="Dashboard").click()
    expect(page.locator("#period")).to_be_visible()


def _result_count(page: Page) -> int:
    text = page.locator("p.paginator").inner_text()
    found = re.search(r"(\d+) turns?", text)
    assert found, text
    return int(found.group(1))


def test_pick_a_range_click_a_category_and_land_on_the_same_count(admin_page: Page) -> None:
    page = admin_page
    world_build(turns=140)
    _open_dashboard(page)

    page.locator(".presets a[data-days='365']").click()
    expect(page.locator(".presets a.current")).to_have_attribute("data-days", "365")
    page.get_by_label("from").fill(FIRST.isoformat())
    page.get_by_label("to", exact=True).fill(LAST.isoformat())
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#content h2").first).to_contain_text(
        f"{FIRST:%Y-%m-%d} to {LAST:%Y-%m-%d}"
    )
    if target := os.environ.get("E2E_DASHBOARD_SCREENSHOT"):
        page.set_viewport_size({"width": 1400, "height": 900})
        page.screenshot(path=target, full_page=True)

    figure = page.locator("#category-feedback tr[data-category='HR'] td a").first
    shown = int(figure.inner_text())
    assert shown > 0
    figure.click()

    expect(page.locator("#changelist")).to_be_visible()
    assert _result_count(page) == shown
    expect(page.locator("#changelist-filter")).to_contain_text("HR")


def test_a_refused_question_leads_to_an_audit_that_says_why(admin_page: Page) -> None:
    page = admin_page
    world_build()
    _open_dashboard(page)
    page.get_by_label("from").fill(FIRST.isoformat())
    page.get_by_label("to", exact=True).fill(LAST.isoformat())
    page.get_by_role("button", name="Show").click()

    refused = page.locator("#questions-refused tr", has_text="Can I work from abroad?")
    count = int(refused.locator("a").inner_text())
    refused.locator("a").click()
    assert _result_count(page) == count

    page.locator("#result_list tbody tr a").first.click()
    reason = page.locator("#refusal-reason")
    expect(reason).to_contain_text("Refused because")
    expect(reason).to_contain_text("The documents say nothing about working abroad")
