"""The answer area in a real browser: the source preview (click and tap), feedback stored and
shown in the audit, copy and regenerate, and a turn resumed after a reload or a dropped socket
rendered exactly once.

The server and login are the e2e fixtures' (daphne in a thread, the test database), the
answers scripted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, BrowserContext, Page, WebSocketRoute, expect

from apps.answers.models import Turn, TurnFeedback, TurnStatus
from apps.answers.providers.registry import providers_override
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder
from tests.e2e.chat import PASSWORD, ask, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How many days of annual leave do employees get?"
# Three sources, each cited once: a resumed turn must list [1][2][3], not [1][2][3][1][2][3].
THREE_SOURCES = (
    "Employees take twenty-six days of annual leave a year [c1]. ",
    "The company VPN uses WireGuard [c2]. ",
    "Travel expenses are refunded within ten working days [c3].",
)
SLOW = "slowly"
LONG_WAIT = 20_000


@pytest.fixture
def answers(embedder: CountingEmbedder) -> Iterator[ScriptedComposer]:
    """Answers citing three handbook documents, in pieces 1 s apart (3 s with SLOW)."""
    handbook_load(embedder)
    scripted = ScriptedComposer(
        pieces_for=lambda q: THREE_SOURCES, delay_for=lambda q: 3.0 if SLOW in q else 1.0
    )
    with providers_override(providers_fake(embedder, composer=scripted)):
        yield scripted


def _finished_answer(page: Page, question: str = QUESTION, nth: int = 0) -> None:
    ask(page, question)
    answer = page.locator("li.turn").nth(nth).locator(".answer")
    expect(answer).not_to_have_class(re.compile(r"streaming"), timeout=LONG_WAIT)


# --- The source preview --------------------------------------------------------------------


def test_a_chip_opens_the_cited_passage_with_its_sentence_highlighted(
    chat_page: Page,
    answers: ScriptedComposer,
) -> None:
    page = chat_page
    _finished_answer(page)
    answer = page.locator("li.turn").first.locator(".answer")
    # Words, not numbers or routing labels: the score is there for hover and screen readers.
    expect(answer.locator(".badge-words")).to_have_text(
        re.compile(r"^(Well|Partly|Not) supported$")
    )
    expect(answer.locator(".badge")).to_have_attribute(
        "title", re.compile(r"^Support score 0\.\d\d of 1$")
    )
    expect(page.locator(".route")).to_have_count(0)
    expect(answer).not_to_contain_text(re.compile(r"factual|T1", re.IGNORECASE))

    chip = answer.locator(".answer-text a.chip").first
    expect(chip).to_have_text("1")
    chip.click()
    panel = page.locator("#source-panel")
    expect(panel).to_be_visible()
    expect(panel.locator("h2")).to_have_text(re.compile(r"^\[1\] "))
    expect(panel.locator(".source-meta")).to_contain_text("Handbook")
    expect(panel.locator("mark.cited-sentence")).to_contain_text("twenty-six days of annual leave")
    expect(panel.locator(".source-panel-close")).to_be_focused()
    read = panel.locator("a.source-open")
    expect(read).to_have_attribute("href", re.compile(r"^/documents/\d+/read/\?chunk=\d+#cited$"))
    expect(panel.locator("a.source-download")).to_have_attribute(
        "href", re.compile(r"^/documents/\d+/source/$")
    )

    if target := os.environ.get("E2E_PREVIEW_SCREENSHOT"):
        page.screenshot(path=target)
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(chip).to_be_focused()

    # A source entry opens its own passage; "open document" reads it in the page.
    answer.locator(".sources a").nth(1).click()
    expect(panel.locator("h2")).to_have_text(re.compile(r"^\[2\] "))
    expect(panel.locator(".source-chunk")).not_to_be_empty()
    passage = panel.locator(".source-chunk").inner_text().split(".")[0]
    href = read.get_attribute("href")
    page.goto(f"{page.url.split('/c/')[0]}{href}")
    expect(page.locator("#cited")).to_contain_text(passage)
    expect(page.get_by_role("link", name="Download original")).to_be_visible()


@pytest.mark.browser_context_args(viewport={"width": 390, "height": 844}, has_touch=True)
def test_a_tap_on_a_phone_opens_the_passage_as_a_sheet(
    chat_page: Page,
    answers: ScriptedComposer,
) -> None:
    page = chat_page
    _finished_answer(page)
    page.locator("li.turn").first.locator(".answer-text a.chip").first.tap()
    panel = page.locator("#source-panel")
    expect(panel.locator("mark.cited-sentence")).to_contain_text("twenty-six days")
    box = panel.bounding_box()
    assert box is not None
    # A sheet along the bottom edge, the full width of the phone.
    assert abs(box["y"] + box["height"] - 844) < 2 and abs(box["width"] - 390) < 2
    if target := os.environ.get("E2E_PREVIEW_PHONE_SCREENSHOT"):
        page.screenshot(path=target)
    panel.locator(".source-panel-close").tap()
    expect(panel).to_be_hidden()


# --- Feedback, copy, regenerate --------------------------------------------------------------


def test_feedback_is_stored_and_shown_in_the_audit(
    chat_page: Page,
    answers: ScriptedComposer,
    browser: Browser,
    daphne_url: str,
    django_user_model: type[User],
) -> None:
    page = chat_page
    _finished_answer(page)
    turn = page.locator("li.turn").first
    turn.get_by_role("button", name="Not helpful").click()
    form = turn.locator(".feedback-form")
    expect(form).to_be_visible()
    form.get_by_label("Not in the documents").check()
    form.get_by_label("Comment (optional)").fill("The handbook says nothing about this")
    form.get_by_role("button", name="Send").click()
    expect(form).to_be_hidden()
    expect(turn.locator(".action-status")).to_have_text("Thanks for your feedback.")

    stored = Turn.objects.get()
    wait_for(lambda: TurnFeedback.objects.filter(turn=stored, reason="not_in_documents").exists())
    feedback = TurnFeedback.objects.get(turn=stored)
    assert (feedback.rating, feedback.comment) == ("down", "The handbook says nothing about this")
    assert feedback.user is not None and feedback.user.username == "ada"

    page.reload()
    expect(page.get_by_role("button", name="Not helpful")).to_have_attribute("aria-pressed", "true")

    django_user_model.objects.create_superuser("root", password=PASSWORD)
    admin: BrowserContext = browser.new_context()
    audit = admin.new_page()
    audit.goto(f"{daphne_url}/admin/login/?next=/admin/answers/turn/{stored.pk}/change/")
    audit.locator("#id_username").fill("root")
    audit.locator("#id_password").fill(PASSWORD)
    audit.locator("input[type=submit]").click()
    shown = audit.locator("#audit-feedback")
    expect(shown).to_contain_text("The handbook says nothing about this")
    expect(shown).to_contain_text(re.compile(r"not in the documents", re.IGNORECASE))
    admin.close()


def test_copy_takes_the_text_with_its_sources_and_regenerate_asks_again(
    chat_page: Page,
    answers: ScriptedComposer,
    daphne_url: str,
) -> None:
    page = chat_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=daphne_url)
    _finished_answer(page)
    first = page.locator("li.turn").first
    first.get_by_role("button", name="Copy").click()
    expect(first.locator(".action-status")).to_have_text("Copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert re.search(r"annual leave a year ?\[1\]", copied) and "WireGuard" in copied
    assert re.search(r"Sources:\n\[1\] .+\n\[2\] .+\n\[3\] ", copied)

    first.get_by_role("button", name="Regenerate").click()
    second = page.locator("li.turn").nth(1)
    expect(second.locator(".question")).to_have_text(QUESTION)
    expect(second.locator(".answer")).not_to_have_class(re.compile("streaming"), timeout=LONG_WAIT)
    turns = list(Turn.objects.order_by("index"))
    assert [t.question for t in turns] == [QUESTION, QUESTION]
    assert turns[0].conversation_id == turns[1].conversation_id
    assert [t.status for t in turns] == [TurnStatus.FINISHED, TurnStatus.FINISHED]
    assert answers.started == 2


# --- Resume --------------------------------------------------------------------------------


def _listed_once(page: Page) -> None:
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer).not_to_have_class(re.compile("streaming"), timeout=LONG_WAIT)
    expect(answer.locator(".sources > li")).to_have_count(3)
    expect(answer.locator(".answer-text a.chip")).to_have_text(["1", "2", "3"])
    expect(answer.locator(".notice")).to_be_hidden()
    text = answer.locator(".answer-text").inner_text()
    assert text.count("twenty-six days") == 1 and text.count("ten working days") == 1


def test_reloading_mid_answer_shows_each_source_once(
    chat_page: Page,
    answers: ScriptedComposer,
) -> None:
    page = chat_page
    ask(page, f"{QUESTION} {SLOW}")
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer.locator("a.chip")).to_have_count(1, timeout=LONG_WAIT)
    expect(answer).to_have_class(re.compile("streaming"))
    page.reload()
    expect(page.locator("li.turn")).to_have_count(1)
    _listed_once(page)
    assert answers.started == 1  # resumed, not asked again


def test_a_dropped_socket_shows_reconnecting_then_resumes_once(
    chat_page: Page,
    answers: ScriptedComposer,
) -> None:
    page = chat_page
    sockets: list[WebSocketRoute] = []
    refuse = {"left": 0}

    def through(route: WebSocketRoute) -> None:
        sockets.append(route)
        if refuse["left"]:  # the network is still down: the next tries fail at once
            refuse["left"] -= 1
            route.close()
            return
        route.connect_to_server()

    page.route_web_socket(re.compile(r"/ws/chat/$"), through)
    page.reload()  # the page's socket now goes through the route
    expect(page.locator("#connection")).to_have_text("")
    ask(page, f"{QUESTION} {SLOW}")
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer.locator("a.chip")).to_have_count(1, timeout=LONG_WAIT)
    refuse["left"] = 2  # about 1.5 s without a connection (the page backs off 0.5 s, 1 s)
    sockets[-1].close()  # the network drops under the page
    expect(page.locator("#connection")).to_have_text("Reconnecting…")
    expect(page.locator("main.chat")).to_have_class(re.compile("reconnecting"))
    _listed_once(page)
    expect(page.locator("#connection")).to_have_text("")
    assert len(sockets) >= 4 and answers.started == 1
