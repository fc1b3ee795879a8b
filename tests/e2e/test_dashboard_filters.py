"""The dashboard as an analyst finds and filters it (issue #30, items 1, 2 and 6): the board is
first under Analytics on the admin home, a preset survives a collection and a category being
picked, a bad combination is said beside its field with the board still there, and documents
that failed or wait are listed apart from those never cited."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.corpus.models import DocumentStatus
from tests.analytics.dashboard_world import world_build
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "an-analyst-password"


@pytest.fixture
def analyst_page(page: Page, live_server: LiveServer) -> Page:
    """Signed into the admin as an analyst: the dashboard and categories, no turns."""
    analyst = User.objects.create_user("ana", password=PASSWORD, is_staff=True)
    for codename in ("view_dailyturncount", "view_category"):
        analyst.user_permissions.add(Permission.objects.get(codename=codename))
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/admin/")
    page.get_by_label("Username").fill("ana")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    return page


def _first_under_analytics(page: Page) -> None:
    rows = page.locator("#content-main .app-analytics tr[class^='model-']")
    expect(rows.first).to_contain_text("Dashboard")
    rows.first.get_by_role("link", name="Dashboard").first.click()
    expect(page.locator("#period")).to_be_visible()


def test_the_dashboard_is_first_under_analytics_on_the_home_and_the_app_index(
    analyst_page: Page,
) -> None:
    page = analyst_page
    _first_under_analytics(page)
    page.get_by_role("link", name="Analytics", exact=True).first.click()
    expect(page.locator("h1")).to_contain_text("Analytics")
    _first_under_analytics(page)


def test_a_preset_keeps_when_a_collection_is_picked(analyst_page: Page) -> None:
    page = analyst_page
    world_build()  # its fortnight lies within the last year
    _first_under_analytics(page)

    page.locator(".presets a[data-days='365']").click()
    page.get_by_label("collection").select_option(label="Handbook")
    page.get_by_role("button", name="Show").click()

    expect(page.locator(".errornote")).to_have_count(0)
    expect(page.locator("#summary")).to_be_visible()
    expect(page.locator(".presets a.current")).to_have_attribute("data-days", "365")
    expect(page.locator("#content h2").first).to_contain_text("(365 days)")
    expect(page.get_by_label("collection")).to_have_value(str(_pk("Handbook")))
    # And a group on top keeps both.
    page.get_by_label("user group").select_option(label="staff")
    page.get_by_role("button", name="Show").click()
    expect(page.locator(".presets a.current")).to_have_attribute("data-days", "365")
    expect(page.get_by_label("collection")).to_have_value(str(_pk("Handbook")))
    if target := os.environ.get("E2E_DASHBOARD_FILTER_SCREENSHOT"):
        page.set_viewport_size({"width": 1400, "height": 900})
        page.screenshot(path=target, full_page=True)


def test_a_preset_a_collection_and_a_category_are_all_kept(analyst_page: Page) -> None:
    page = analyst_page
    world = world_build()
    _first_under_analytics(page)

    page.locator(".presets a[data-days='365']").click()
    page.get_by_label("collection").select_option(label="Handbook")
    page.get_by_label("category").select_option(label="HR")
    page.get_by_role("button", name="Show").click()

    expect(page.locator(".errornote")).to_have_count(0)
    expect(page.locator("#summary")).to_be_visible()
    expect(page.locator(".presets a.current")).to_have_attribute("data-days", "365")
    expect(page.get_by_label("collection")).to_have_value(str(world.a.pk))
    expect(page.get_by_label("category")).to_have_value(str(world.hr.pk))
    # The board counts only HR's turns: its categories table lists HR alone.
    expect(page.locator("#category-feedback tbody tr")).to_have_count(1)
    expect(page.locator("#category-feedback tbody tr[data-category='HR']")).to_be_visible()
    # Another preset keeps both filters.
    page.locator(".presets a[data-days='90']").click()
    expect(page.get_by_label("collection")).to_have_value(str(world.a.pk))
    expect(page.get_by_label("category")).to_have_value(str(world.hr.pk))


def test_a_bad_range_is_said_beside_its_field_and_the_board_stays(analyst_page: Page) -> None:
    page = analyst_page
    world_build()
    _first_under_analytics(page)

    page.locator(".presets a[data-days='90']").click()
    page.get_by_label("collection").select_option(label="IT wiki")
    page.get_by_label("to", exact=True).fill("2026-03-01")
    page.get_by_role("button", name="Show").click()

    beside = page.locator("#period .field", has=page.locator("#id_day_from"))
    expect(beside.locator(".errorlist")).to_contain_text("A custom range needs a first day.")
    expect(page.locator("#summary")).to_be_visible()
    expect(page.locator(".presets a.current")).to_have_attribute("data-days", "90")
    expect(page.get_by_label("collection")).to_have_value(str(_pk("IT wiki")))


def test_failed_and_waiting_documents_are_listed_apart_from_never_cited(
    analyst_page: Page,
) -> None:
    page = analyst_page
    world = world_build()
    DocumentFactory.create(
        collection=world.a,
        title="Broken scan",
        status=DocumentStatus.FAILED,
        error_message="No text could be read from the file",
    )
    DocumentFactory.create(collection=world.a, title="Queued memo", status=DocumentStatus.PENDING)
    _first_under_analytics(page)

    never = page.locator("#documents-never")
    expect(never).to_contain_text("Never cited")
    expect(never).not_to_contain_text("Broken scan")
    expect(never).not_to_contain_text("Queued memo")
    unready = page.locator("#documents-unready")
    expect(unready.locator("tr[data-status='failed']")).to_contain_text("Broken scan")
    expect(unready.locator("tr[data-status='failed']")).to_contain_text("No text could be read")
    expect(unready.locator("tr[data-status='pending']")).to_contain_text("Queued memo")


def _pk(name: str) -> int:
    from apps.corpus.models import Collection

    return Collection.objects.get(name=name).pk
