"""What a person notices first on the chat page (issue #30, items 4, 5 and 7): conversation
titles that read as the topic, right-to-left details (a citation marker beside an English
source inside a Persian answer, Persian example questions naming English headings), and search
results whose titles are readable and whose table snippets read as rows.

The server and login are the e2e fixtures' (daphne in a thread, the test database); the
post-turn step runs as the task worker would run it, after the answer is stored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from apps.analytics.services import post_turn_run
from apps.answers.models import Turn
from apps.answers.providers.registry import providers_override
from apps.answers.routing.types import Intent
from apps.corpus.models import Document
from tests.answers.fakes import (
    FixedClassifier,
    ScriptedComposer,
    classification,
    handbook_load,
    providers_fake,
)
from tests.conftest import CountingEmbedder
from tests.e2e.chat import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)
LONG_WAIT = 15_000
FSI, PDI = "\u2068", "\u2069"
PERSIAN_ANSWER = ("طبق راهنما: Employees take twenty-six days of annual leave every year [c1]",)
TABLE_DOC = (
    "# Allowances\n\nThe allowances per trip are in this table.\n\n"
    "| Trip | Allowance |\n|---|---|\n| Domestic trip | 40 euros per day |\n"
    "| Foreign trip | 60 euros per day |\n"
)
PERSIAN_DOC = "# مرخصی\n\n## درخواست مرخصی\n\nدرخواست مرخصی را به مدیر خود بدهید.\n"
HEX_TITLE = "FEFF00540072006100760065006C00200061006C006C006F00770061006E006300650073"


@pytest.fixture
def ada(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password=PASSWORD)


@pytest.fixture
def handbook(embedder: CountingEmbedder) -> Iterator[None]:
    """The handbook (English documents) and an allowances table whose PDF-like title is a hex
    dump; "documents about" is a search, Persian questions are Persian."""
    handbook_load(embedder, documents={"allowances.md": TABLE_DOC})
    Document.objects.filter(filename="allowances.md").update(title=HEX_TITLE)
    handbook_load(embedder)
    classifier = FixedClassifier(
        when={
            "documents about": classification(Intent.SEARCH),
            "مرخصی": classification(language="fa"),
            "چگونه": classification(Intent.PROCEDURAL, language="fa"),
        }
    )
    composer = ScriptedComposer(pieces_for=lambda q: PERSIAN_ANSWER if "مرخصی" in q else None)
    with providers_override(providers_fake(embedder, composer=composer, classifier=classifier)):
        yield


def _log_in(page: Page, url: str, path: str = "/") -> None:
    page.set_default_timeout(10_000)
    page.goto(f"{url}{path}")
    page.locator("#id_username").fill("ada")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("form.sign-in button[type=submit]").click()
    expect(page.locator("#question")).to_be_visible()
    expect(page.locator("#chat[data-connected]")).to_have_count(1)


def _answered(page: Page, question: str, nth: int = 0) -> Turn:
    page.locator("#question").fill(question)  # labelled in the page's language
    page.locator("#question").press("Enter")
    answer = page.locator("li.turn").nth(nth).locator(".answer")
    expect(answer).not_to_have_class(re.compile("streaming"), timeout=LONG_WAIT)
    return Turn.objects.filter(question=question).get()


# --- Item 4: titles ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("How do I upload several files at once?", "Uploading several files at once"),
        ("چگونه چند فایل را همزمان بارگذاری کنم؟", "چگونگی بارگذاری چند فایل همزمان"),
    ],
)
def test_a_conversation_is_titled_by_its_topic_in_its_language(
    page: Page,
    daphne_url: str,
    ada: User,
    handbook: None,
    embedder: CountingEmbedder,
    question: str,
    title: str,
) -> None:
    _log_in(page, daphne_url)
    turn = _answered(page, question)
    post_turn_run(turn_id=turn.pk, embedder=embedder, chat=None)  # as the worker does

    page.goto(f"{daphne_url}/c/{turn.conversation_id}/")
    expect(page.locator("h1")).to_have_text(title)
    expect(page.locator("li.conversation a").first).to_have_text(title)


# --- Item 5: right to left -----------------------------------------------------------------


@pytest.mark.browser_context_args(locale="fa-IR")
def test_a_marker_beside_an_english_source_stays_inside_a_persian_bubble(
    page: Page, daphne_url: str, ada: User, handbook: None
) -> None:
    _log_in(page, daphne_url)
    _answered(page, "کارمندان چند روز مرخصی دارند؟")
    bubble = page.locator("li.turn .answer").first
    chip = bubble.locator("a.chip").first
    expect(chip).to_have_text("1")
    assert bubble.evaluate("b => getComputedStyle(b).direction") == "rtl"
    assert chip.evaluate("c => getComputedStyle(c).unicodeBidi") == "isolate"
    outer, inner = bubble.bounding_box(), chip.bounding_box()
    assert outer and inner
    padding = float(bubble.evaluate("b => parseFloat(getComputedStyle(b).paddingLeft)"))
    assert outer["x"] + padding - 1 <= inner["x"]
    assert inner["x"] + inner["width"] <= outer["x"] + outer["width"] - padding + 1
    # Reloaded, the stored answer's chip is isolated the same way.
    page.reload()
    stored = page.locator("li.turn .answer a.chip").first
    assert stored.evaluate("c => getComputedStyle(c).unicodeBidi") == "isolate"


@pytest.mark.browser_context_args(locale="fa-IR")
def test_persian_examples_come_from_persian_headings_and_isolate_english_ones(
    page: Page, daphne_url: str, ada: User, handbook: None, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder, "راهنما", documents={"fa-leave.md": PERSIAN_DOC})
    _log_in(page, daphne_url)
    examples = page.locator("#empty button.example")
    expect(examples.first).to_be_visible()
    texts = examples.evaluate_all("buttons => buttons.map(b => b.textContent)")
    topics = [t.split("«", 1)[1].rsplit("»", 1)[0] for t in texts if t.startswith("دربارهٔ «")]
    assert len(topics) == len(texts) > 1, texts
    # The Persian heading comes first and as it is; every English one is isolated, so «»
    # and the Persian words keep their places around it.
    assert topics[0] == "درخواست مرخصی", texts
    assert all(t.startswith(FSI) and t.endswith(PDI) for t in topics[1:]), texts
    assert not any(HEX_TITLE in t for t in topics), texts  # the file's name instead
    assert examples.first.evaluate("b => getComputedStyle(b).direction") == "rtl"
    if target := os.environ.get("E2E_CHAT_FA_START_SCREENSHOT"):
        page.set_viewport_size({"width": 1280, "height": 800})
        page.screenshot(path=target)


# --- Item 7: search results ----------------------------------------------------------------


def test_search_titles_are_readable_and_table_snippets_read_as_rows(
    page: Page, daphne_url: str, ada: User, handbook: None
) -> None:
    _log_in(page, daphne_url)
    _answered(page, "documents about the allowance per foreign trip")
    # Matched or weak: both lists show a result alike.
    result = page.locator("li.turn li[dir=auto]", has_text="allowances.md").first
    expect(result).to_be_visible()
    title = result.locator("a").first
    expect(title).to_have_text("allowances.md")  # the file's name, not the hex dump
    snippet = result.locator(".snippet")
    # One row per line, its cells apart; the header rule gone.
    rows = snippet.evaluate("p => p.textContent.split('\\n')")
    assert "Domestic trip · 40 euros per day" in rows, rows
    expect(snippet).not_to_contain_text("|")
    expect(snippet).not_to_contain_text("---")

    page.reload()  # a stored turn shows the same
    stored = page.locator("li.turn li[dir=auto]", has_text="allowances.md").first
    expect(stored.locator("a").first).to_have_text("allowances.md")
    expect(stored.locator(".snippet")).not_to_contain_text("|")
