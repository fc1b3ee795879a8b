"""What the answer says before its first words, in a real browser: "Searching…" from the moment
the turn is accepted, "Writing…" once the `progress` event says the composer is at work, and
nothing once the text (or the end) has come; in English and in Persian.

The search and the composer are slowed down (a classifier and a composer that wait), so each
state stays long enough to be seen; a MutationObserver records every state the page showed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from apps.answers.providers.registry import providers_override
from apps.answers.routing.types import Classification, HistoryMessage
from tests.answers.fakes import FixedClassifier, ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder
from tests.e2e.chat import PASSWORD, ask

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How many days of annual leave do employees get?"
PIECES = ("Employees take twenty-six days of annual leave a year [c1]. ",)
WAIT_S = 1.5
LONG_WAIT = 20_000

# Every text the answers' progress lines show, in order, from before the question.
WATCH = """() => {
  window.shown = [];
  new MutationObserver(() => {
    for (const node of document.querySelectorAll("li.turn .progress")) {
      const text = node.hidden ? "" : node.textContent;
      if (text && window.shown.at(-1) !== text) window.shown.push(text);
    }
  }).observe(document.getElementById("messages"), {
    childList: true, characterData: true, subtree: true, attributes: true,
  });
}"""


@dataclass
class SlowClassifier(FixedClassifier):
    """Searching takes WAIT_S: the router's verdict comes that late."""

    async def classify(self, *, query: str, history: Sequence[HistoryMessage]) -> Classification:
        await asyncio.sleep(WAIT_S)
        return await super().classify(query=query, history=history)


@pytest.fixture
def slow(embedder: CountingEmbedder) -> Iterator[None]:
    handbook_load(embedder)
    composer = ScriptedComposer(pieces=PIECES, delay_s=WAIT_S)
    providers = providers_fake(embedder, composer=composer, classifier=SlowClassifier())
    with providers_override(providers):
        yield


def _states_seen(page: Page, searching: str, writing: str) -> None:
    progress = page.locator("li.turn").first.locator(".progress")
    text = page.locator("li.turn").first.locator(".answer-text")
    expect(progress).to_have_text(searching)
    expect(progress).to_be_visible()
    expect(text).to_have_text("")
    expect(progress).to_have_text(writing)
    expect(text).to_have_text("")
    expect(text).to_contain_text("twenty-six days", timeout=LONG_WAIT)
    expect(progress).to_be_hidden()
    expect(page.locator("li.turn").first).to_have_attribute("data-status", "finished")
    assert page.evaluate("window.shown") == [searching, writing]


def test_the_answer_says_searching_then_writing_before_its_text(
    chat_page: Page, slow: None
) -> None:
    chat_page.evaluate(WATCH)
    ask(chat_page, QUESTION)
    _states_seen(chat_page, "Searching…", "Writing…")


@pytest.mark.browser_context_args(locale="fa-IR")
def test_in_persian_the_states_are_persian(
    page: Page, daphne_url: str, django_user_model: type[User], slow: None
) -> None:
    django_user_model.objects.create_user("ada", password=PASSWORD)
    page.set_default_timeout(10_000)
    page.goto(f"{daphne_url}/")
    page.locator("#id_username").fill("ada")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("form.sign-in button[type=submit]").click()
    expect(page.locator("#chat[data-connected]")).to_have_count(1)
    page.evaluate(WATCH)
    page.locator("#question").fill(QUESTION)
    page.locator("#ask-button").click()
    _states_seen(page, "در حال جست‌وجو…", "در حال نوشتن…")
    assert not re.search(r"[A-Za-z]", " ".join(page.evaluate("window.shown")))
