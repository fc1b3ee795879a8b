"""The chat page: login, the sidebar, past turns rendered from stored rows."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.answers.models import Citation, Conversation, Turn, TurnEvent, TurnStatus
from apps.answers.web.views import mark_only_html, sse_format
from tests.factories import ChunkFactory, DocumentFactory

db = pytest.mark.django_db


@pytest.fixture
def user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password="a-long-test-password")


@pytest.fixture
def ada(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def answered_turn(conversation: Conversation) -> Turn:
    chunk = ChunkFactory.create(document__title="Leave policy", document__filename="leave.md")
    turn = Turn.objects.create(
        conversation=conversation,
        index=conversation.turns.count() + 1,
        question="How many days of leave?",
        answer="Employees take 26 days. Ask your manager.",
        status=TurnStatus.FINISHED,
        intent="factual_question",
        tier="T1",
        action="answer",
        confidence=0.82,
        confidence_band="green",
        followups=["Can leave carry over?", "Who approves leave?"],
    )
    Citation.objects.create(
        turn=turn,
        alias="c1",
        chunk=chunk,
        document=chunk.document,
        title="Leave policy",
        source_file="leave.md",
        page=3,
        snippet="Employees take twenty-six days of annual leave.",
        position=len("Employees take 26 days."),
    )
    return turn


@db
def test_anonymous_is_sent_to_the_login_page(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


@db
def test_the_sidebar_lists_only_my_conversations(
    ada: Client, user: User, django_user_model: type[User]
) -> None:
    titled = Conversation.objects.create(user=user, title="Annual leave")
    untitled = Conversation.objects.create(user=user)
    Turn.objects.create(conversation=untitled, index=1, question="Where is the VPN guide?")
    stranger = django_user_model.objects.create_user("eve", password="x-long-pass")
    Conversation.objects.create(user=stranger, title="Eve's secrets")

    page = ada.get("/").content.decode()
    assert "Annual leave" in page and "Where is the VPN guide?" in page
    assert f"/c/{titled.pk}/" in page and f"/c/{untitled.pk}/" in page
    assert "Eve&#x27;s secrets" not in page and "Eve's secrets" not in page
    assert 'src="/static/answers/chat.js"' in page


@db
def test_a_conversation_renders_its_past_turns_with_chips_badge_and_followups(
    ada: Client, user: User
) -> None:
    conversation = Conversation.objects.create(user=user, title="Leave")
    turn = answered_turn(conversation)
    page = ada.get(f"/c/{conversation.pk}/").content.decode()

    assert "How many days of leave?" in page
    # The chip reads the document in the page (the preview opens on a plain click).
    source = f"/documents/{turn.citations.get().document_id}/read/"
    chip = re.search(r'Employees take 26 days\.<a class="chip" href="([^"]+)"[^>]*>1</a> Ask', page)
    assert chip and chip.group(1) == source
    assert 'data-alias="c1"' in page
    # The badge in words, the score for hover and screen readers; no routing labels.
    assert 'class="badge band-green"' in page and "Well supported" in page
    assert "Support score 0.82 of 1" in page
    # Word boundaries: the page carries a random CSRF token that may hold "T1" inside it.
    assert "factual" not in page.lower() and not re.search(r"\bT[0-3]\b", page)
    assert (
        '<button type="button" class="followup" dir="auto">Can leave carry over?</button>' in page
    )
    assert "p. 3" in page
    assert f'id="turn-render-{turn.pk}"' in page  # the data chat.js renders rich text from


@db
def test_stored_search_results_render_with_only_mark_tags(ada: Client, user: User) -> None:
    conversation = Conversation.objects.create(user=user)
    turn = Turn.objects.create(
        conversation=conversation,
        index=1,
        question="documents about leave",
        action="search",
        status=TurnStatus.FINISHED,
    )
    snippet = (
        "Annual <mark>leave</mark> &amp; <script>alert(1)</script><img src=x onerror=alert(2)>"
    )
    document = DocumentFactory.create()
    TurnEvent.objects.create(
        turn=turn,
        seq=2,
        type="search_results",
        data={
            "results": [
                {
                    "rank": 1,
                    "document": document.pk,
                    "title": "Leave",
                    "url": f"/documents/{document.pk}/source/",
                    "score": 1.0,
                    "page": None,
                    "snippet_html": snippet,
                }
            ]
        },
    )
    page = ada.get(f"/c/{conversation.pk}/").content.decode()
    assert "Annual <mark>leave</mark> &amp; &lt;script&gt;alert(1)&lt;/script&gt;&lt;img" in page
    assert "<script>alert" not in page and "<img src=x" not in page


@db
def test_someone_elses_conversation_is_404(ada: Client, django_user_model: type[User]) -> None:
    stranger = django_user_model.objects.create_user("eve", password="x-long-pass")
    theirs = Conversation.objects.create(user=stranger)
    assert ada.get(f"/c/{theirs.pk}/").status_code == 404


@db
def test_cancelled_and_failed_turns_say_so(ada: Client, user: User) -> None:
    conversation = Conversation.objects.create(user=user)
    Turn.objects.create(
        conversation=conversation,
        index=1,
        question="Stop me",
        status=TurnStatus.CANCELLED,
        error_code="cancelled",
    )
    Turn.objects.create(
        conversation=conversation,
        index=2,
        question="Break me",
        status=TurnStatus.FAILED,
        error_code="model_timeout",
        error_message="The model took too long.",
    )
    page = ada.get(f"/c/{conversation.pk}/").content.decode()
    assert "Stopped." in page and "The model took too long." in page


def test_mark_only_html_keeps_text_and_mark_and_nothing_else() -> None:
    assert mark_only_html("a <MARK>b</MARK> &amp; c") == "a <mark>b</mark> &amp; c"
    assert mark_only_html('<b onclick="x">hi</b>') == "&lt;b onclick=&quot;x&quot;&gt;hi&lt;/b&gt;"
    assert mark_only_html("<mark onclick=x>y</mark>") == "&lt;mark onclick=x&gt;y</mark>"


def test_sse_format_is_one_frame_per_envelope() -> None:
    frame = sse_format({"seq": 4, "turn": 9, "type": "token", "data": {"text": "a\nb ✓"}})
    assert frame == (
        'id: 4\nevent: token\ndata: {"seq":4,"turn":9,"type":"token","data":{"text":"a\\nb ✓"}}\n\n'
    )
