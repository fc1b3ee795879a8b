"""The conversation list, the collection picker, the empty state, the Persian interface and the
phone drawer, in a real browser against daphne and the test database (the e2e fixtures)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from apps.answers.models import Citation, Turn
from apps.answers.providers.registry import providers_override
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.models import Collection
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.conftest import CountingEmbedder
from tests.e2e.chat import PASSWORD
from tests.factories import ConversationFactory, TurnFactory

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def ada(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password=PASSWORD)


@pytest.fixture
def handbook(embedder: CountingEmbedder) -> Iterator[Collection]:
    collection = handbook_load(embedder)
    with providers_override(providers_fake(embedder, composer=ScriptedComposer())):
        yield collection


def _log_in(page: Page, url: str) -> None:
    page.set_default_timeout(10_000)
    page.goto(f"{url}/")
    page.locator("#id_username").fill("ada")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("form.sign-in button[type=submit]").click()
    expect(page.locator("#question")).to_be_visible()
    expect(page.locator("#chat[data-connected]")).to_have_count(1)  # ready to ask


def test_rename_search_and_delete(page: Page, daphne_url: str, ada: User) -> None:
    leave = ConversationFactory.create(user=ada, title="Leave questions")
    turn = TurnFactory.create(conversation=leave, question="How many days of leave?")
    vpn = ConversationFactory.create(user=ada, title="VPN setup")
    TurnFactory.create(conversation=vpn, question="Which VPN client do we use?")
    _log_in(page, daphne_url)
    sidebar = page.locator("#sidebar")
    expect(sidebar.locator(".conversation-group h2").first).to_have_text("Today")

    # Rename in place: Enter saves, the list and the database agree.
    item = page.locator(f'li.conversation[data-id="{leave.pk}"]')
    item.hover()
    item.get_by_role("button", name="Rename “Leave questions”").click()
    title = item.get_by_label("New title")
    expect(title).to_be_focused()
    title.fill("Annual leave 2027")
    title.press("Enter")
    expect(item.locator("a")).to_have_text("Annual leave 2027")
    leave.refresh_from_db()
    assert leave.title == "Annual leave 2027"

    # Search by the text of a question, then by title; the server filters.
    search = page.get_by_placeholder("Search conversations")
    search.fill("which vpn client")
    expect(sidebar.locator("li.conversation")).to_have_count(1)
    expect(sidebar.locator("li.conversation a")).to_have_text("VPN setup")
    search.fill("2027")
    expect(sidebar.locator("li.conversation a")).to_have_text(["Annual leave 2027"])
    search.fill("nothing of the kind")
    expect(sidebar.locator(".no-conversations")).to_be_visible()
    search.fill("")
    expect(sidebar.locator("li.conversation")).to_have_count(2)

    # Delete asks first; Cancel keeps it, Delete hides it and the audit keeps the turn.
    item = page.locator(f'li.conversation[data-id="{leave.pk}"]')
    item.hover()
    item.get_by_role("button", name="Delete “Annual leave 2027”").click()
    dialog = page.locator("#delete-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(item).to_be_visible()
    item.hover()
    item.get_by_role("button", name="Delete “Annual leave 2027”").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(item).to_have_count(0)
    expect(sidebar.locator("li.conversation")).to_have_count(1)
    leave.refresh_from_db()
    assert leave.deleted_at is not None and Turn.objects.filter(pk=turn.pk).exists()
    page.reload()
    expect(sidebar.locator("li.conversation a")).to_have_text(["VPN setup"])


def test_an_example_question_asks_itself(
    page: Page,
    daphne_url: str,
    ada: User,
    handbook: Collection,
) -> None:
    _log_in(page, daphne_url)
    example = page.locator("#empty button.example").first
    expect(example).to_contain_text("Tell me about")
    asked = example.inner_text()
    example.click()
    turn = page.locator("li.turn").first
    expect(turn.locator(".question")).to_have_text(asked)
    expect(turn.locator(".answer")).not_to_have_class(re.compile("streaming"), timeout=10_000)
    expect(page.locator("#empty")).to_have_count(0)
    # The new conversation joins the list under Today, marked as the open one.
    expect(page.locator("li.conversation.current")).to_have_count(1)
    assert Turn.objects.get().question == asked


def test_the_collection_picker_restricts_the_answer(
    page: Page,
    daphne_url: str,
    ada: User,
    handbook: Collection,
    embedder: CountingEmbedder,
) -> None:
    travel = collection_get_or_create(name="Travel", public=True)
    submitted = document_submit(
        collection=travel,
        filename="trains.md",
        data=b"# Trains\n\nBook trains two weeks ahead; first class needs approval.",
    )
    document_process(document_id=submitted.document.pk, embedder=embedder)
    _log_in(page, daphne_url)

    picker = page.locator("#collection-picker")
    expect(picker.locator("summary")).to_have_text("All collections")
    picker.locator("summary").click()
    picker.get_by_label("Travel").check()
    expect(picker.locator("summary")).to_have_text("Collections: 1 of 2")
    page.get_by_label("Question").fill("How many days of annual leave do employees get?")
    page.get_by_role("button", name="Ask", exact=True).click()
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer).not_to_have_class(re.compile("streaming"), timeout=10_000)

    turn = Turn.objects.get()
    assert turn.readable_collections == [travel.pk]
    cited = Citation.objects.filter(turn=turn).select_related("document")
    assert all(c.document is None or c.document.collection_id == travel.pk for c in cited)
    # The conversation remembers the choice.
    page.reload()
    expect(picker.locator("summary")).to_have_text("Collections: 1 of 2")
    expect(picker.get_by_label("Travel", exact=True)).to_be_checked()


@pytest.mark.browser_context_args(locale="fa-IR")
def test_a_persian_browser_gets_the_persian_right_to_left_page(
    page: Page,
    daphne_url: str,
    ada: User,
) -> None:
    ConversationFactory.create(user=ada, title="مرخصی سالانه")
    _log_in(page, daphne_url)
    html = page.locator("html")
    expect(html).to_have_attribute("dir", "rtl")
    expect(html).to_have_attribute("lang", "fa")
    expect(page.locator("h1")).to_have_text("گفت‌وگوی تازه")
    expect(page.get_by_role("button", name="بپرس", exact=True)).to_be_visible()
    expect(page.get_by_placeholder("جست‌وجو در گفت‌وگوها")).to_be_visible()
    expect(page.locator(".conversation-group h2")).to_have_text("امروز")
    # The whole layout mirrors: the sidebar is on the right, the question box starts there.
    width = page.viewport_size["width"] if page.viewport_size else 1280
    sidebar = page.locator("#sidebar").bounding_box()
    assert sidebar and sidebar["x"] > width / 2
    # The switch goes back to English.
    page.get_by_role("button", name="English").click()
    expect(html).to_have_attribute("dir", "ltr")
    expect(page.locator("h1")).to_have_text("New conversation")


@pytest.mark.browser_context_args(viewport=PHONE, has_touch=True, is_mobile=True)
def test_the_sidebar_is_a_drawer_on_a_phone(
    page: Page,
    daphne_url: str,
    ada: User,
) -> None:
    older = ConversationFactory.create(user=ada, title="Expenses")
    _log_in(page, daphne_url)
    sidebar = page.locator("#sidebar")
    menu = page.get_by_role("button", name="Conversations")
    expect(sidebar).to_be_hidden()
    expect(menu).to_be_visible()
    composer = page.locator("#ask-form").bounding_box()
    assert composer and composer["y"] + composer["height"] <= PHONE["height"] + 1

    menu.tap()
    expect(sidebar).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(sidebar.get_by_role("link", name="+ New conversation")).to_be_visible()
    expect(sidebar.get_by_role("button", name="Log out")).to_be_visible()
    # Slid fully in (it slides for 0.2 s), and no wider than the phone.
    page.wait_for_function(
        "() => document.getElementById('sidebar').getBoundingClientRect().x >= 0"
    )
    box = sidebar.bounding_box()
    assert box and box["width"] <= PHONE["width"] * 0.9
    page.locator("#drawer-backdrop").tap(position={"x": PHONE["width"] - 20, "y": 400})
    expect(sidebar).to_be_hidden()

    menu.tap()
    sidebar.get_by_role("link", name="Expenses").tap()
    expect(page).to_have_url(re.compile(f"/c/{older.pk}/$"))
    expect(page.locator("h1")).to_have_text("Expenses")
    expect(sidebar).to_be_hidden()
