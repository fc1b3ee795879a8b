"""Browser tests: Debian's chromium, driven by Playwright, against pytest-django's live server
(the admin) or daphne in a thread (the chat page, whose socket needs ASGI).

They run in their own pytest process (`make e2e`): Playwright's sync API keeps an event loop
in the main thread, which pytest-asyncio's shared loop and Django's async-safety check dislike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connection
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker
from pytest_django.live_server_helper import LiveServer

from tests.conftest import CountingEmbedder
from tests.e2e.chat import PASSWORD

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


@pytest.fixture(scope="session")
def daphne_url(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    from channels.routing import get_default_application
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server  # installs Twisted's asyncio reactor
    from twisted.internet import reactor

    server = Server(
        application=ASGIStaticFilesHandler(get_default_application()),
        endpoints=build_endpoint_description_strings(host="127.0.0.1", port=0),
        signal_handlers=False,
    )
    thread = threading.Thread(target=server.run, name="daphne", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.listening_addresses:
        if time.monotonic() > deadline:
            raise RuntimeError("daphne did not start listening")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{server.listening_addresses[0][1]}"
    reactor.callFromThread(reactor.stop)  # type: ignore[misc]
    thread.join(timeout=5)
    # The server's worker threads keep their database connections; end them, or the test
    # database cannot be dropped at the end of the session.
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def chat_page(page: Page, daphne_url: str, django_user_model: type[User]) -> Page:
    """Log in through the login page the chat redirects to, and land back on the chat."""
    # A plain user, not staff: the chat has its own login page, not the admin's.
    django_user_model.objects.create_user("ada", password=PASSWORD)
    page.set_default_timeout(10_000)
    page.goto(f"{daphne_url}/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
    return page
