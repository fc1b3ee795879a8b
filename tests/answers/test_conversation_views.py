"""The chat page's conversation list: rename, delete (hidden, kept for the audit), search,
date groups, the collection picker, the empty state's examples and the Persian interface."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from apps.answers.apps import conversations_retention_purge
from apps.answers.conversations.selectors import (
    NotFound,
    conversation_get,
    conversations_grouped,
    example_topics,
)
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.turn.selectors import turn_get
from tests.factories import (
    ChunkFactory,
    CollectionFactory,
    ConversationFactory,
    DocumentFactory,
    TurnFactory,
)

db = pytest.mark.django_db
JSON = {"Accept": "application/json"}


def _error(response: Any) -> str:
    body = response.json()
    assert set(body) == {"error"}
    message: str = body["error"]["message"]
    return message


# --- rename ---------------------------------------------------------------------------------


@db
def test_rename_stores_one_clean_line(ada: Client, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    url = f"/c/{conversation.pk}/rename/"

    response = ada.post(url, {"title": "  Leave\n plans \t2027 "}, headers=JSON)

    assert response.status_code == 200
    assert response.json() == {"id": str(conversation.pk), "title": "Leave plans 2027"}
    conversation.refresh_from_db()
    assert conversation.title == "Leave plans 2027"
    # A plain form post (no script) lands back on the conversation.
    response = ada.post(url, {"title": "Leave"})
    assert response.status_code == 302 and response["Location"] == f"/c/{conversation.pk}/"


@db
@pytest.mark.parametrize(
    ("data", "message"),
    [({"title": "   "}, "empty"), ({}, "must be text"), ({"title": "x" * 201}, "at most 200")],
)
def test_a_bad_title_is_a_400_with_a_message(
    ada: Client, user: User, data: dict[str, str], message: str
) -> None:
    conversation = ConversationFactory.create(user=user, title="Kept")
    response = ada.post(f"/c/{conversation.pk}/rename/", data, headers=JSON)
    assert response.status_code == 400
    assert message in _error(response)
    conversation.refresh_from_db()
    assert conversation.title == "Kept"


@db
def test_only_the_owner_renames_or_deletes(ada: Client, django_user_model: type[User]) -> None:
    other = django_user_model.objects.create_user("grace", password="a-long-test-password")
    theirs = ConversationFactory.create(user=other, title="Theirs")
    for action, data in (("rename", {"title": "Mine now"}), ("delete", {})):
        response = ada.post(f"/c/{theirs.pk}/{action}/", data, headers=JSON)
        assert response.status_code == 404 and _error(response)
    theirs.refresh_from_db()
    assert theirs.title == "Theirs" and theirs.deleted_at is None


@db
def test_signed_out_and_wrong_method_are_refused(client: Client, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    response = client.post(f"/c/{conversation.pk}/rename/", {"title": "x"}, headers=JSON)
    assert response.status_code == 401 and _error(response)
    response = client.post(f"/c/{conversation.pk}/delete/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(user)
    assert client.get(f"/c/{conversation.pk}/rename/").status_code == 405


# --- delete ---------------------------------------------------------------------------------


@db
def test_delete_hides_it_from_its_owner_and_keeps_the_turns(ada: Client, user: User) -> None:
    conversation = ConversationFactory.create(user=user, title="Old leave questions")
    turn = TurnFactory.create(conversation=conversation)

    response = ada.post(f"/c/{conversation.pk}/delete/", headers=JSON)

    assert response.status_code == 200 and response.json()["deleted"] is True
    assert ada.get(f"/c/{conversation.pk}/").status_code == 404
    assert "Old leave questions" not in ada.get("/").content.decode()
    with pytest.raises(NotFound):
        conversation_get(conversation_id=conversation.pk, user_id=user.pk)
    with pytest.raises(NotFound):
        turn_get(turn_id=turn.pk, user_id=user.pk)
    # The audit (no user: the operator) still reads both.
    assert conversation_get(conversation_id=conversation.pk, user_id=None).deleted_at
    assert Turn.objects.filter(pk=turn.pk).exists()
    # Deleting again: it is gone for its owner.
    assert ada.post(f"/c/{conversation.pk}/delete/", headers=JSON).status_code == 404


@db
def test_delete_waits_for_an_answer_still_streaming(ada: Client, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    TurnFactory.create(conversation=conversation, status=TurnStatus.STREAMING)
    response = ada.post(f"/c/{conversation.pk}/delete/", headers=JSON)
    assert response.status_code == 409 and "stop it first" in _error(response)
    conversation.refresh_from_db()
    assert conversation.deleted_at is None


@db
def test_the_retention_purges_only_conversations_deleted_long_enough_ago(
    user: User, settings: Any
) -> None:
    now = timezone.now()
    old = ConversationFactory.create(user=user, deleted_at=now - timedelta(days=40))
    TurnFactory.create(conversation=old)
    recent = ConversationFactory.create(user=user, deleted_at=now - timedelta(days=5))
    live = ConversationFactory.create(user=user)

    settings.RAG_DELETED_CONVERSATION_RETENTION_DAYS = 0  # keep forever
    assert conversations_retention_purge() == 0
    settings.RAG_DELETED_CONVERSATION_RETENTION_DAYS = 30
    assert conversations_retention_purge() >= 2  # the conversation and its turn

    assert set(Conversation.objects.all()) == {recent, live}
    assert not Turn.objects.filter(conversation_id=old.pk).exists()


# --- search and date groups ----------------------------------------------------------------


def _listed(client: Client, query: str) -> str:
    response = client.get("/conversations/", {"q": query})
    assert response.status_code == 200
    return response.content.decode()


@db
def test_search_finds_title_question_and_answer_text_of_my_live_conversations(
    ada: Client, user: User, django_user_model: type[User]
) -> None:
    by_title = ConversationFactory.create(user=user, title="Travel budget")
    by_question = ConversationFactory.create(user=user, title="A")
    TurnFactory.create(conversation=by_question, question="Is WireGuard required?")
    by_answer = ConversationFactory.create(user=user, title="B")
    TurnFactory.create(conversation=by_answer, answer="Refunds take ten WORKING days.")
    deleted = ConversationFactory.create(user=user, title="Travel gone", deleted_at=timezone.now())
    other = django_user_model.objects.create_user("grace", password="a-long-test-password")
    theirs = ConversationFactory.create(user=other, title="Travel theirs")

    assert f"/c/{by_title.pk}/" in _listed(ada, "travel")
    for conversation in (by_question, by_answer, deleted, theirs):
        assert f"/c/{conversation.pk}/" not in _listed(ada, "travel")
    assert f"/c/{by_question.pk}/" in _listed(ada, "wireguard")
    assert f"/c/{by_answer.pk}/" in _listed(ada, "working days")
    assert "No conversation matches" in _listed(ada, "nothing like this")
    # NUL: never stored, and refused in any query string (ragplatform/input_hygiene.py).
    assert ada.get("/conversations/", {"q": "wire\x00guard"}).status_code == 400
    # The page itself filters with ?q= too (the search works without the script).
    page = ada.get("/", {"q": "wireguard"}).content.decode()
    assert f"/c/{by_question.pk}/" in page and f"/c/{by_title.pk}/" not in page


@db
def test_a_search_too_long_is_a_400(ada: Client) -> None:
    response = ada.get("/conversations/", {"q": "x" * 201})
    assert response.status_code == 400 and "200" in _error(response)


def _at(day: date) -> Conversation:
    conversation = Conversation(title=str(day))
    conversation.updated_at = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    return conversation


def test_conversations_group_into_today_last_7_days_and_older() -> None:
    today = date(2026, 12, 1)
    days = [today, today - timedelta(days=1), today - timedelta(days=6), today - timedelta(days=7)]
    groups = conversations_grouped(conversations=[_at(d) for d in days], today=today)
    assert [(g.period, [c.title for c in g.conversations]) for g in groups] == [
        ("today", ["2026-12-01"]),
        ("week", ["2026-11-30", "2026-11-25"]),
        ("older", ["2026-11-24"]),
    ]
    assert conversations_grouped(conversations=[_at(days[3])], today=today)[0].period == "older"


@db
def test_the_sidebar_shows_date_headings(ada: Client, user: User) -> None:
    ConversationFactory.create(user=user, title="Fresh")
    stale = ConversationFactory.create(user=user, title="Stale")
    Conversation.objects.filter(pk=stale.pk).update(updated_at=timezone.now() - timedelta(days=30))
    page = ada.get("/").content.decode()
    assert page.index(">Today<") < page.index("Fresh") < page.index(">Older<") < page.index("Stale")
    assert ">Last 7 days<" not in page  # empty groups are left out


# --- collections and examples --------------------------------------------------------------


@db
def test_the_picker_offers_only_readable_collections_and_shows_the_last_choice(
    ada: Client, user: User
) -> None:
    handbook = CollectionFactory.create(name="Handbook")
    policies = CollectionFactory.create(name="Policies")
    secret = CollectionFactory.create(name="Board minutes", public=False)
    secret.reader_groups.add(Group.objects.create(name="board"))
    conversation = ConversationFactory.create(user=user)
    TurnFactory.create(conversation=conversation, readable_collections=[policies.pk])

    page = ada.get(f"/c/{conversation.pk}/").content.decode()

    assert 'value="Handbook"' in page and 'value="Policies" checked' in page
    assert "Board minutes" not in page
    assert "Collections: 1 of 2" in page
    # A question that could read every readable collection shows no restriction.
    TurnFactory.create(conversation=conversation, readable_collections=[handbook.pk, policies.pk])
    page = ada.get(f"/c/{conversation.pk}/").content.decode()
    assert "All collections" in page and " checked" not in page


@db
def test_examples_come_from_readable_documents_in_the_users_language_first(user: User) -> None:
    public = CollectionFactory.create()
    hidden = CollectionFactory.create(public=False)
    vpn = DocumentFactory.create(collection=public, title="VPN guide", chunk_count=2)
    ChunkFactory.create(document=vpn, index=0, heading="VPN guide")
    ChunkFactory.create(document=vpn, index=1, heading="VPN guide > Installing the client")
    DocumentFactory.create(collection=public, title="Annual leave", chunk_count=1)
    DocumentFactory.create(collection=public, title="مرخصی", language="fa", chunk_count=1)
    DocumentFactory.create(collection=hidden, title="Salaries", chunk_count=1)

    english = example_topics(user_id=user.pk, language="en")
    persian = example_topics(user_id=user.pk, language="fa")

    # A topic in the other language is isolated, so it keeps its direction in the sentence.
    assert english == ["Annual leave", "Installing the client", "\u2068مرخصی\u2069"]
    assert persian[0] == "مرخصی" and "Salaries" not in persian


@db
def test_the_empty_page_suggests_questions_that_ask_when_clicked(ada: Client) -> None:
    DocumentFactory.create(title="Annual leave", chunk_count=1)
    page = ada.get("/").content.decode()
    # A follow-up button: the page asks its text when it is clicked.
    assert 'class="followup example"' in page
    assert "Tell me about “Annual leave”" in page


# --- the Persian interface -------------------------------------------------------------------


@db
def test_a_persian_browser_gets_a_right_to_left_persian_page(ada: Client) -> None:
    DocumentFactory.create(title="مرخصی", language="fa", chunk_count=1)
    page = ada.get("/", HTTP_ACCEPT_LANGUAGE="fa-IR,fa;q=0.9").content.decode()
    assert '<html lang="fa" dir="rtl">' in page
    for persian in ("گفت‌وگوی تازه", "جست‌وجو در گفت‌وگوها", "بپرس", "خروج"):
        assert persian in page
    assert "دربارهٔ «مرخصی» توضیح بده" in page
    strings = re.search(r'<script id="chat-strings" type="application/json">(.*?)</script>', page)
    assert strings and json.loads(strings[1])["reconnecting"] == "در حال اتصال دوباره…"
    english = ada.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="en" dir="ltr">' in english and "New conversation" in english


@db
def test_the_language_switch_overrides_the_browser(ada: Client) -> None:
    response = ada.post("/i18n/setlang/", {"language": "fa", "next": "/"})
    assert response.status_code == 302
    page = ada.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="fa" dir="rtl">' in page and "English" in page


@db
def test_the_login_page_is_persian_for_a_persian_browser(client: Client) -> None:
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="fa").content.decode()
    assert '<html lang="fa" dir="rtl">' in page
    assert "ورود" in page and "نام کاربری" in page


@db
def test_a_persian_error_message(ada: Client, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    response = ada.post(
        f"/c/{conversation.pk}/rename/", {"title": " "}, headers={**JSON, "Accept-Language": "fa"}
    )
    assert response.status_code == 400 and _error(response) == "عنوان خالی است"
