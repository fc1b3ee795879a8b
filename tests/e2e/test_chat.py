"""A user asks questions on the chat page in a real browser, over a real WebSocket.

pytest-django's live server speaks WSGI only, so the page is served by daphne (the server
`make serve` runs) in a thread of this process (the `daphne_url` fixture): the fake providers
put in place below are the ones the server uses, and the test database is the one it reads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from apps.answers.models import Turn, TurnStatus
from apps.answers.providers.registry import providers_override
from apps.answers.routing.types import Intent
from apps.answers.turn.search_results import search_results_data
from tests.answers.fakes import (
    HANDBOOK,
    FixedClassifier,
    ScriptedComposer,
    classification,
    handbook_load,
    providers_fake,
)
from tests.conftest import CountingEmbedder
from tests.e2e.chat import ask, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

SLOW_WORD = "slowly"


@pytest.fixture
def composer(embedder: CountingEmbedder) -> Iterator[ScriptedComposer]:
    """Answers stream in three pieces 1.5 s apart (several seconds with SLOW_WORD): slow enough
    that a loaded CI machine still sees the answer mid-stream."""
    # Follow-ups come from the cited document's own sections: the leave policy has two, each
    # long enough to be a chunk of its own (RAG_CHUNK_MAX_WORDS is 140).
    filler = " ".join(["Ask the office team if anything in this section is unclear."] * 12)
    leave = (
        f"{HANDBOOK['leave.md']} {filler}\n\n## Carrying days over\n\n"
        f"Unused days do not carry over to the next year. {filler}"
    )
    handbook_load(embedder, documents={**HANDBOOK, "leave.md": leave})
    scripted = ScriptedComposer(delay_for=lambda q: 3.0 if SLOW_WORD in q else 1.5)
    with providers_override(providers_fake(embedder, composer=scripted)):
        yield scripted


def test_ask_stream_cite_follow_up_and_stop(chat_page: Page, composer: ScriptedComposer) -> None:
    page = chat_page
    ask(page, "How many days of annual leave do employees get?")
    first = page.locator("li.turn").nth(0)
    answer = first.locator(".answer")

    # Tokens arrive while the answer is still streaming, before the rest of it.
    expect(answer.locator(".answer-text")).to_contain_text("twenty-six days")
    expect(answer).to_have_class("bubble answer streaming")
    expect(answer.locator(".answer-text")).not_to_contain_text("carry over")

    expect(answer).not_to_have_class("bubble answer streaming", timeout=10_000)
    expect(answer.locator(".answer-text")).to_contain_text("Unused days do not carry over")
    chip = answer.locator(".answer-text a.chip").first
    expect(chip).to_have_text("1")
    assert (chip.get_attribute("href") or "").startswith("/documents/")
    expect(answer.locator(".sources li")).to_have_count(1)
    expect(answer.locator(".badge")).to_be_visible()
    expect(answer.locator(".badge")).to_have_class(re.compile(r"band-(green|yellow|red)"))
    expect(answer.locator(".badge")).to_contain_text(re.compile(r"(Well|Partly|Not) supported"))
    assert "/c/" in page.url  # the new conversation got its address

    followup = answer.locator("button.followup").first
    expect(followup).to_be_visible()
    asked = followup.inner_text()
    followup.click()
    second = page.locator("li.turn").nth(1)
    expect(second.locator(".question")).to_have_text(asked)
    expect(second.locator(".answer")).not_to_have_class("bubble answer streaming", timeout=10_000)
    expect(second.locator(".answer .badge")).to_be_visible()

    ask(page, f"Explain the leave rules {SLOW_WORD}, please")
    third = page.locator("li.turn").nth(2)
    expect(third.locator(".answer-text")).to_contain_text("twenty-six days", timeout=10_000)
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(third.locator(".notice")).to_have_text("Stopped.")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden()
    expect(third.locator(".answer-text")).not_to_contain_text("carry over")
    if target := os.environ.get("E2E_CHAT_SCREENSHOT"):
        page.screenshot(path=target, full_page=True)

    last = Turn.objects.order_by("-pk").first()
    assert last is not None
    wait_for(lambda: Turn.objects.get(pk=last.pk).status == TurnStatus.CANCELLED)
    assert composer.started == 3
    # The page a user returns to renders the same turns from the stored rows.
    page.reload()
    expect(page.locator("li.turn")).to_have_count(3)
    expect(page.locator("li.turn").nth(0).locator("a.chip").first).to_have_text("1")
    expect(page.locator("li.turn").nth(2).locator(".notice")).to_have_text("Stopped.")


TABLE_ANSWER = (
    "| Policy | Rule |\n|---|---|\n| Leave | 26 days a year [c1] |\n",
    "| Expenses | refunded in **ten** days [c2] |\n\n- Ask your manager [c1]\n- Keep receipts\n",
)
PERSIAN_ANSWER = ("کارمندان سالانه بیست و شش روز مرخصی دارند [c1]. ", "درخواست را به مدیر بدهید.")


HOSTILE = '<img src=x onerror="document.title=1"><b>bold</b>'


@pytest.fixture
def search_and_persian(
    monkeypatch: pytest.MonkeyPatch, embedder: CountingEmbedder
) -> Iterator[None]:
    """ "documents about ..." is a search whose first snippet carries hostile markup; a Persian
    question gets a Persian answer."""
    handbook_load(embedder)
    classifier = FixedClassifier(
        when={
            "documents about": classification(Intent.SEARCH),
            "مرخصی": classification(language="fa"),
        }
    )
    composer = ScriptedComposer(
        pieces_for=lambda q: (
            PERSIAN_ANSWER if "مرخصی" in q else TABLE_ANSWER if "Compare" in q else None
        )
    )
    fake = providers_fake(embedder, composer=composer, classifier=classifier)

    async def with_hostile_snippet(**kwargs: Any) -> dict[str, Any]:
        # The server escapes snippets; this checks the page would not trust one that was not.
        data = await search_results_data(**kwargs)
        data["results"][0]["snippet_html"] += HOSTILE
        return data

    monkeypatch.setattr("apps.answers.turn.run.search_results_data", with_hostile_snippet)
    with providers_override(fake):
        yield


def test_search_results_a_right_to_left_answer_and_a_table(
    chat_page: Page, search_and_persian: None
) -> None:
    page = chat_page
    ask(page, "documents about travel expenses")
    results = page.locator("li.turn").nth(0).locator(".results > li")
    expect(results.first).to_be_visible()
    expect(results.first.locator("a").first).to_have_attribute(
        "href", re.compile(r"^/documents/\d+/source/$")
    )
    snippet = results.first.locator(".snippet")
    expect(snippet.locator("mark").first).to_be_visible()
    expect(snippet).to_contain_text(HOSTILE)  # shown as text ...
    expect(page.locator(".results img, .results b")).to_have_count(0)  # ... never as markup
    assert page.title() != "1"

    ask(page, "کارمندان چند روز مرخصی دارند؟")
    answer = page.locator("li.turn").nth(1).locator(".answer")
    expect(answer).not_to_have_class("bubble answer streaming", timeout=10_000)
    paragraph = answer.locator(".answer-text p").first
    expect(paragraph).to_contain_text("بیست و شش روز")
    assert paragraph.evaluate("p => getComputedStyle(p).direction") == "rtl"
    expect(answer.locator("a.chip")).to_have_text("1")

    ask(page, "Compare the leave and expenses rules")
    answer = page.locator("li.turn").nth(2).locator(".answer")
    expect(answer).not_to_have_class("bubble answer streaming", timeout=10_000)
    table = answer.locator(".answer-text table")
    expect(table.locator("th")).to_have_text(["Policy", "Rule"])
    expect(table.locator("tr")).to_have_count(3)
    expect(table.locator("td a.chip")).to_have_text(["1", "2"])
    expect(table.locator("td strong")).to_have_text("ten")
    # A repeated [c1] sends no second citation event, so only its first use gets a chip.
    expect(answer.locator(".answer-text ul li")).to_have_text(["Ask your manager", "Keep receipts"])
    if target := os.environ.get("E2E_CHAT_SEARCH_SCREENSHOT"):
        page.screenshot(path=target, full_page=True)
