"""The answer as it streams, in a real browser: appended piece by piece (the nodes already
written stay), busy while it is written, its end said once in the status region, in English
and in Persian; and the Markdown writer (answer_writer.js) writing the same answer whether it
comes whole or in pieces.

The server, login and fake providers are those of test_chat.py (daphne in a thread, the test
database, scripted answers).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from apps.answers.providers.registry import providers_override
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder
from tests.e2e.chat import PASSWORD, ask

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How many days of annual leave do employees get?"
PIECES = (
    "Employees take twenty-six days of annual leave a year [c1]. ",
    "Unused days do not carry over. ",
    "Travel expenses are refunded within ten working days [c3].",
)
SLOW = "slowly"
LONG_WAIT = 20_000

# Watches the page from before the question: what the status region says, and every node the
# answer's text loses (none, if it is only ever appended to).
WATCH = """() => {
  window.said = [];
  const status = document.getElementById("chat-status");
  new MutationObserver(() => status.textContent && window.said.push(status.textContent))
    .observe(status, { childList: true, characterData: true, subtree: true });
  window.removed = 0;
  new MutationObserver((records) => {
    for (const r of records) if (r.target.closest?.(".answer-text")) window.removed += r.removedNodes.length;
  }).observe(document.getElementById("messages"), { childList: true, subtree: true });
}"""


@pytest.fixture
def answers(embedder: CountingEmbedder) -> Iterator[ScriptedComposer]:
    """Three pieces 1.5 s apart (3 s with SLOW), citing two handbook documents."""
    handbook_load(embedder)
    scripted = ScriptedComposer(
        pieces_for=lambda q: PIECES, delay_for=lambda q: 3.0 if SLOW in q else 1.5
    )
    with providers_override(providers_fake(embedder, composer=scripted)):
        yield scripted


def test_the_answer_is_appended_busy_while_written_and_its_end_said_once(
    chat_page: Page, answers: ScriptedComposer
) -> None:
    page = chat_page
    assert page.locator("#messages").get_attribute("aria-live") is None
    page.evaluate(WATCH)
    ask(page, QUESTION)
    answer = page.locator("li.turn").first.locator(".answer")
    text = answer.locator(".answer-text")

    # The first piece and its chip, the moment its citation arrives, after the text it supports.
    expect(text.locator("a.chip")).to_have_count(1)
    expect(answer).to_have_attribute("aria-busy", "true")
    expect(text).not_to_contain_text("carry over")
    before = page.evaluate(
        """() => {
          const chip = document.querySelector("li.turn .answer-text a.chip");
          window.first = chip.parentNode.firstChild;
          window.chip = chip;
          return [window.first.textContent, chip.previousSibling.textContent];
        }"""
    )
    assert before[0].startswith("Employees take twenty-six days")
    assert re.search(r"annual leave a year ?$", before[1])

    expect(answer).not_to_have_class(re.compile("streaming"), timeout=LONG_WAIT)
    expect(text).to_contain_text("Unused days do not carry over")
    expect(text.locator("a.chip")).to_have_text(["1", "2"])
    assert answer.get_attribute("aria-busy") is None
    # The nodes written first are still there, unchanged: later pieces were appended.
    kept = page.evaluate(
        """([first]) => {
          const text = document.querySelector("li.turn .answer-text");
          return [text.contains(window.first), window.first.textContent === first,
                  text.contains(window.chip), window.removed];
        }""",
        [before[0]],
    )
    assert kept == [True, True, True, 0]
    status = page.locator("#chat-status")
    expect(status).to_have_attribute("role", "status")
    expect(status).to_have_text("The answer is complete.")
    assert page.evaluate("window.said") == ["The answer is complete."]


def test_a_stopped_answer_is_said_stopped_and_no_longer_busy(
    chat_page: Page, answers: ScriptedComposer
) -> None:
    page = chat_page
    page.evaluate(WATCH)
    ask(page, f"{QUESTION} {SLOW}")
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer.locator(".answer-text")).to_contain_text("twenty-six days", timeout=LONG_WAIT)
    expect(answer).to_have_attribute("aria-busy", "true")
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(answer.locator(".notice")).to_have_text("Stopped.")
    expect(page.locator("#chat-status")).to_have_text("Stopped.")
    assert answer.get_attribute("aria-busy") is None
    assert page.evaluate("window.said") == ["Stopped."]


@pytest.mark.browser_context_args(locale="fa-IR")
def test_in_the_persian_interface_every_word_the_scripts_add_is_persian(
    page: Page, daphne_url: str, django_user_model: type[User], answers: ScriptedComposer
) -> None:
    django_user_model.objects.create_user("ada", password=PASSWORD)
    page.set_default_timeout(10_000)
    page.goto(f"{daphne_url}/")
    page.locator("#id_username").fill("ada")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("form.sign-in button[type=submit]").click()
    expect(page.locator("#chat[data-connected]")).to_have_count(1)
    page.evaluate(WATCH)

    _ask_fa(page, QUESTION)
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer).not_to_have_class(re.compile("streaming"), timeout=LONG_WAIT)
    expect(answer.locator(".badge-words")).to_have_text(
        re.compile("^(به‌خوبی پشتیبانی می‌شود|تا حدی پشتیبانی می‌شود|پشتیبانی نمی‌شود)$")
    )
    expect(answer.locator(".badge")).to_have_attribute("title", re.compile(r"^امتیاز پشتیبانی "))
    expect(page.locator("#chat-status")).to_have_text("پاسخ کامل شد.")

    _ask_fa(page, f"{QUESTION} {SLOW}")
    second = page.locator("li.turn").nth(1).locator(".answer")
    expect(second.locator(".answer-text")).to_contain_text("twenty-six", timeout=LONG_WAIT)
    page.locator("#stop-button").click()
    expect(second.locator(".notice")).to_have_text("متوقف شد.")
    expect(page.locator("#chat-status")).to_have_text("متوقف شد.")
    said = page.evaluate("window.said")
    assert said == ["پاسخ کامل شد.", "متوقف شد."]
    assert not re.search(r"[A-Za-z]", " ".join(said))


def _ask_fa(page: Page, question: str) -> None:
    page.locator("#question").fill(question)
    page.locator("#ask-button").click()


# --- the writer ------------------------------------------------------------------------------

# Each answer, its chips' offsets, and the HTML it is written as (chips as <span>).
WRITTEN = [
    (
        "| Policy | Rule |\n|---|---|\n| Leave | 26 days a year |\n"
        "| Expenses | refunded in **ten** days |\n\n- Ask your manager\n- Keep receipts\n",
        [52, 114],
        '<table dir="auto"><tr><th>Policy</th><th>Rule</th></tr><tr><td>Leave</td>'
        '<td>26 days a year<span class="chip">1</span></td></tr><tr><td>Expenses</td>'
        "<td>refunded in <strong>ten</strong> days</td></tr></table>"
        '<ul dir="auto"><li dir="auto">Ask your manager<span class="chip">2</span></li>'
        '<li dir="auto">Keep receipts</li></ul>',
    ),
    (
        "Hello **world** and *stars*.\nSecond line\n\n## Head\n1. one\n2) two",
        [5, 12],
        '<p dir="auto">Hello<span class="chip">1</span> <strong>worl<span class="chip">2</span>'
        "d</strong> and *stars*.\nSecond line</p>"
        '<h3 dir="auto">Head</h3><ol dir="auto"><li dir="auto">one</li>'
        '<li dir="auto">two</li></ol>',
    ),
    (
        "***x** ****y** **a*b**c** end",
        [3],
        '<p dir="auto">*<strong><span class="chip">1</span>x</strong> **<strong>y</strong> '
        "**a*b<strong>c</strong> end</p>",
    ),
    (
        "1. \n# \n#####  five\n- a\n\n- b",
        [3, 1],
        '<p dir="auto">1<span class="chip">2</span>. <span class="chip">1</span></p>'
        '<h3 dir="auto"></h3><p dir="auto">#####  five</p>'
        '<ul dir="auto"><li dir="auto">a</li></ul><ul dir="auto"><li dir="auto">b</li></ul>',
    ),
]
PIECES_OF_MARKDOWN = ["- ", "* ", "• ", "1. ", "12) ", "# ", "## ", "##### ", "| ", "|", " | "]
PIECES_OF_MARKDOWN += ["|---|---|", "**", "*", " ", "\n", "\n\n", "word", "Ab", "x", "-", "3", "#"]

WRITE = """async ([cases, cuts]) => {
  const { AnswerWriter, writeAnswer } = await import("/static/answers/answer_writer.js");
  const chipNode = (chip) => Object.assign(document.createElement("span"), { className: "chip", textContent: String(chip.number) });
  return cases.map(([text, offsets], n) => {
    const chips = offsets.map((offset, i) => ({ number: i + 1, offset }));
    const whole = document.createElement("div");
    writeAnswer(whole, text, chips, chipNode);
    // The same answer as a stream: cut where the test says, each chip at its offset.
    const streamed = document.createElement("div");
    const writer = new AnswerWriter(streamed);
    const stops = [...new Set([...cuts[n], ...offsets, text.length])].sort((a, b) => a - b);
    let at = 0;
    for (const stop of stops) {
      writer.write(text.slice(at, stop));
      at = stop;
      chips.filter((chip) => chip.offset === stop).forEach((chip) => writer.cite(chipNode(chip)));
    }
    writer.end();
    whole.normalize();
    streamed.normalize();
    return [whole.innerHTML, streamed.innerHTML];
  });
}"""


def _cases(count: int) -> list[tuple[str, list[int]]]:
    rng = random.Random(20261202)
    cases = []
    for _ in range(count):
        text = "".join(rng.choice(PIECES_OF_MARKDOWN) for _ in range(rng.randint(1, 14)))
        cases.append((text, sorted(rng.randint(0, len(text)) for _ in range(rng.randint(0, 3)))))
    return cases


def _cuts(cases: list[Any]) -> list[list[int]]:
    rng = random.Random(7)
    return [sorted(rng.sample(range(len(text) + 1), min(len(text), 6))) for text, _ in cases]


def test_the_writer_writes_the_same_answer_whole_or_in_pieces(
    chat_page: Page, answers: ScriptedComposer
) -> None:
    fixed = [(text, offsets) for text, offsets, _ in WRITTEN]
    written = chat_page.evaluate(WRITE, [fixed, _cuts(fixed)])
    assert [whole for whole, _ in written] == [html for _, _, html in WRITTEN]
    assert [streamed for _, streamed in written] == [html for _, _, html in WRITTEN]

    cases = _cases(500)
    for (text, offsets), (whole, streamed) in zip(
        cases, chat_page.evaluate(WRITE, [cases, _cuts(cases)]), strict=True
    ):
        assert streamed == whole, (text, offsets)
