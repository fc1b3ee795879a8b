"""Browser tests: Debian's chromium, driven by Playwright, against pytest-django's live server.

They run in their own pytest process (`make e2e`): Playwright's sync API keeps an event loop
in the main thread, which pytest-asyncio's shared loop and Django's async-safety check dislike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from tests.conftest import CountingEmbedder

E2E_DIR = Path(__file__).resolve().parent
ADMIN_PASSWORD = "a-long-e2e-password"
CHROMIUM = "/usr/bin/chromium"
# No sandbox (containers run as root), no GPU, and nothing that phones home during a test run.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Session-wide hook: mark only this folder's tests, before `-m` deselects anything.
    for item in items:
        if E2E_DIR in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    # The system chromium, so `playwright install` (a download) is never needed.
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "args": CHROMIUM_ARGS,
    }


@pytest.fixture
def e2e_settings(settings: LazySettings, embedder: CountingEmbedder) -> CountingEmbedder:
    """Uploads are processed during the request (immediate tasks) by the fast fake embedder."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    return embedder


@pytest.fixture
def admin_page(page: Page, live_server: LiveServer) -> Page:
    """A browser page logged into the admin through the login form, as a superuser."""
    User.objects.create_superuser("admin", "admin@example.com", ADMIN_PASSWORD)
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/admin/")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    return page
