"""The embeddable widget in a real browser: an intranet page served by its own HTTP server
(another origin than the platform's) adds the one script tag, asks, and sees the answer stream
in with its numbered source links and confidence; a page from an origin not listed is refused.

The platform is the e2e fixtures' daphne on 127.0.0.1; the host pages come from Python's
http.server on 127.0.0.2, one listed port and one not.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from apps.answers.models import Turn
from apps.answers.providers.registry import providers_override
from apps.corpus.models import Document
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "pk-e2e-widget-key-0123456789"
QUESTION = "How many days of annual leave do employees get?"
PIECES = ("Employees take twenty-six days ", "of annual leave a year [c1]. ", "Unused days lapse.")
HOST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Intranet</title></head>
<body><h1>Intranet home</h1>
<script src="{platform}/widget/widget.js" data-key="{key}"
        data-collections="Handbook" data-title="Ask the handbook"></script>
</body></html>
"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.2", 0), handler)
    threading.Thread(target=server.serve_forever, name="host-page", daemon=True).start()
    return server, f"http://127.0.0.2:{server.server_address[1]}"


@pytest.fixture
def host_pages(daphne_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(a listed page's URL, an unlisted page's URL): the same page on two origins."""
    (tmp_path / "index.html").write_text(HOST_PAGE.format(platform=daphne_url, key=KEY))
    listed, listed_url = _serve(tmp_path)
    unlisted, unlisted_url = _serve(tmp_path)
    yield f"{listed_url}/index.html", f"{unlisted_url}/index.html"
    for server in (listed, unlisted):
        server.shutdown()
        server.server_close()


@pytest.fixture
def widget(
    settings: LazySettings,
    embedder: CountingEmbedder,
    django_user_model: type[User],
    host_pages: tuple[str, str],
) -> Iterator[tuple[str, str]]:
    handbook_load(embedder)
    django_user_model.objects.create_user("widget", password="a-long-e2e-password")
    settings.RAG_WIDGET_ALLOWED_ORIGINS = [host_pages[0].removesuffix("/index.html")]
    settings.RAG_WIDGET_KEY = KEY
    settings.RAG_WIDGET_USER = "widget"
    settings.RAG_WIDGET_COLLECTIONS = ["Handbook"]
    scripted = ScriptedComposer(pieces_for=lambda q: PIECES, delay_s=0.7)
    with providers_override(providers_fake(embedder, composer=scripted)):
        yield host_pages


def _ask(page: Page, url: str) -> None:
    page.set_default_timeout(15_000)
    page.goto(url)
    page.get_by_role("button", name="Ask the handbook").click()
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Ask", exact=True).click()


def test_a_page_of_a_listed_origin_sees_the_answer_stream_in_with_its_sources(
    page: Page, widget: tuple[str, str]
) -> None:
    _ask(page, widget[0])
    answer = page.locator(".answer")
    # Streamed: the first words are there while the answer is still being written.
    expect(answer).to_contain_text("twenty-six days")
    expect(answer).to_have_attribute("aria-busy", "true")
    expect(answer).to_have_attribute("aria-busy", "false")
    expect(answer).to_contain_text("Unused days lapse.")
    leave = Document.objects.get(filename="leave.md")
    marker = answer.get_by_role("link", name="[1]")
    expect(marker).to_have_attribute("href", re.compile(rf"/documents/{leave.pk}/read/\?chunk="))
    source = page.get_by_role("list", name="Sources").get_by_role("listitem")
    expect(source).to_have_count(1)
    expect(source.get_by_role("link", name="Leave")).to_have_attribute(
        "href", re.compile(rf"^http://127\.0\.0\.1:\d+/documents/{leave.pk}/read/")
    )
    expect(page.locator(".badge")).to_have_text(re.compile(r"confidence \(\d+%\)"))
    turn = Turn.objects.get()
    assert turn.question == QUESTION
    assert turn.conversation.user_id == User.objects.get(username="widget").pk


def test_a_page_of_an_origin_not_listed_is_refused(page: Page, widget: tuple[str, str]) -> None:
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    _ask(page, widget[1])
    expect(page.get_by_role("alert")).to_have_text(
        "The answer service could not be reached from this page"
    )
    expect(page.locator(".answer")).to_have_text("")
    # The preflight is refused (403, no CORS headers), so the question itself is never sent.
    assert [url for url in failed if url.endswith("/widget/ask")] != []
    assert not Turn.objects.exists()
