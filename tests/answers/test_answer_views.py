"""The chat's answer endpoints: a cited source's preview and the asker's feedback.

Someone else's turn, a source in a collection the reader may not read, and a source that does
not exist all get the same 404; bad feedback gets a 400 that says what is wrong.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from apps.answers.models import Citation, Turn, TurnFeedback, TurnStatus
from apps.answers.web.source_preview import sentence_best_match
from tests.factories import (
    ChunkFactory,
    CitationFactory,
    CollectionFactory,
    ConversationFactory,
    DocumentFactory,
    TurnFactory,
)

db = pytest.mark.django_db
ANSWER = "Employees take 26 days of leave. Ask your manager first."
CHUNK_TEXT = (
    "Leave is booked in the portal. Every employee gets twenty-six days of annual leave. "
    "Unused days expire in March."
)


@pytest.fixture
def ada(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def eve(django_user_model: type[User]) -> Client:
    other = Client()
    other.force_login(django_user_model.objects.create_user("eve", password="a-long-pass-eve"))
    return other


def _cited_turn(user: User, *, public: bool = True) -> tuple[Turn, Citation]:
    document = DocumentFactory.create(
        title="Leave policy",
        collection=CollectionFactory.create(name="HR" if public else "Board", public=public),
    )
    ChunkFactory.create(document=document, index=0, text="Before.")
    chunk = ChunkFactory.create(document=document, index=1, text=CHUNK_TEXT, page=4)
    ChunkFactory.create(document=document, index=2, text="After.")
    turn = TurnFactory.create(conversation=ConversationFactory.create(user=user), answer=ANSWER)
    first = CitationFactory.create(turn=turn, alias="c3", chunk=chunk, position=len(ANSWER))
    citation = CitationFactory.create(
        turn=turn, alias="c4", chunk=chunk, position=len("Employees take 26 days of leave.")
    )
    assert first.pk < citation.pk
    return turn, citation


# --- The source preview --------------------------------------------------------------------


@db
def test_the_preview_shows_the_cited_chunk_its_place_and_the_supporting_sentence(
    ada: Client, user: User
) -> None:
    turn, citation = _cited_turn(user)
    response = ada.get(f"/turns/{turn.pk}/sources/c4/")
    assert response.status_code == 200
    preview = response.json()
    # c4 stands first in the answer, so the reader saw it as [1].
    assert preview["number"] == 1
    assert (preview["title"], preview["collection"]) == ("Leave policy", "HR")
    chunk = preview["chunk"]
    assert (chunk["text"], chunk["page"], chunk["heading"]) == (CHUNK_TEXT, 4, "Leave policy")
    start, end = chunk["highlight"]
    assert CHUNK_TEXT[start:end] == "Every employee gets twenty-six days of annual leave."
    assert preview["supported_sentence"] == "Employees take 26 days of leave."
    document = citation.document_id
    assert chunk["previous_url"] == f"/documents/{document}/chunks/0/"
    assert chunk["next_url"] == f"/documents/{document}/chunks/2/"
    assert chunk["read_url"] == f"/documents/{document}/read/?chunk=1#cited"
    assert preview["download_url"] == f"/documents/{document}/source/"


@db
def test_a_replaced_chunk_previews_the_text_the_citation_kept(ada: Client, user: User) -> None:
    turn, citation = _cited_turn(user)
    Citation.objects.filter(pk=citation.pk).update(chunk=None, snippet="The kept copy.")
    chunk = ada.get(f"/turns/{turn.pk}/sources/c4/").json()["chunk"]
    assert chunk["text"] == "The kept copy."
    assert chunk["previous_url"] is None and chunk["next_url"] is None


@db
def test_someone_elses_turn_an_unreadable_source_and_a_missing_one_are_the_same_404(
    ada: Client, eve: Client, user: User
) -> None:
    turn, _ = _cited_turn(user)
    hidden, _ = _cited_turn(user, public=False)
    missing = ada.get(f"/turns/{turn.pk}/sources/c9/")
    assert missing.status_code == 404
    for response in (
        eve.get(f"/turns/{turn.pk}/sources/c4/"),
        ada.get(f"/turns/{hidden.pk}/sources/c4/"),
        ada.get(f"/turns/{turn.pk}/sources/{'c' * 50}/"),
        ada.get("/turns/999999/sources/c1/"),
    ):
        assert response.status_code == 404
        assert "No such" in response.json()["error"]["message"]


@db
def test_the_preview_needs_a_login(client: Client, user: User) -> None:
    turn, _ = _cited_turn(user)
    assert client.get(f"/turns/{turn.pk}/sources/c4/").status_code == 401


def test_the_best_sentence_is_the_one_sharing_most_words() -> None:
    assert sentence_best_match("Nothing in common here.", "Employees take leave") is None
    text = "Cats sleep. Employees take leave in summer. Dogs bark."
    start, end = sentence_best_match(text, "When do employees take leave?") or (0, 0)
    assert text[start:end] == "Employees take leave in summer."


# --- Feedback ------------------------------------------------------------------------------


def _post(client: Client, turn_id: int, body: object) -> tuple[int, dict[str, object]]:
    response = client.post(
        f"/turns/{turn_id}/feedback/", json.dumps(body), content_type="application/json"
    )
    return response.status_code, response.json()


@db
def test_the_asker_rates_an_answer_and_a_second_rating_replaces_the_first(
    ada: Client, user: User
) -> None:
    turn, _ = _cited_turn(user)
    assert _post(ada, turn.pk, {"rating": "up"})[0] == 200
    status, body = _post(
        ada, turn.pk, {"rating": "down", "reason": "wrong_source", "comment": " Not this one "}
    )
    assert status == 200
    assert body == {"rating": "down", "reason": "wrong_source", "comment": "Not this one"}
    feedback = TurnFeedback.objects.get()
    assert (feedback.turn_id, feedback.user_id, feedback.rating) == (turn.pk, user.pk, "down")
    assert (feedback.reason, feedback.comment) == ("wrong_source", "Not this one")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"rating": "meh"}, '"rating" must be one of up, down'),
        ({}, '"rating" must be one of'),
        ({"rating": "up", "reason": "boring"}, '"reason" must be empty or one of'),
        ({"rating": "up", "comment": 5}, '"comment" must be a string'),
        (
            {"rating": "up", "comment": "x" * (settings.RAG_FEEDBACK_COMMENT_MAX_CHARS + 1)},
            "comment is too long",
        ),
        (["up"], "must be a JSON object"),
    ],
)
@db
def test_bad_feedback_is_a_400_that_says_why(
    ada: Client, user: User, body: object, message: str
) -> None:
    turn, _ = _cited_turn(user)
    status, answer = _post(ada, turn.pk, body)
    assert status == 400
    assert message in str(answer["error"])
    assert not TurnFeedback.objects.exists()


@db
def test_feedback_that_is_not_json_or_on_a_streaming_answer_is_a_400(
    ada: Client, user: User
) -> None:
    turn, _ = _cited_turn(user)
    response = ada.post(f"/turns/{turn.pk}/feedback/", "{", content_type="application/json")
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]["message"]
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.STREAMING)
    status, body = _post(ada, turn.pk, {"rating": "up"})
    assert status == 400 and "still being written" in str(body["error"])


@db
def test_only_the_asker_may_rate_and_only_by_post(ada: Client, eve: Client, user: User) -> None:
    turn, _ = _cited_turn(user)
    assert _post(eve, turn.pk, {"rating": "down"})[0] == 404
    assert _post(ada, 999999, {"rating": "down"})[0] == 404
    assert _post(Client(), turn.pk, {"rating": "down"})[0] == 401
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(user)
    response = forged.post(
        f"/turns/{turn.pk}/feedback/", '{"rating": "up"}', content_type="application/json"
    )
    assert response.status_code == 403  # a page on another site cannot rate for the asker
    assert ada.get(f"/turns/{turn.pk}/feedback/").status_code == 405
    assert not TurnFeedback.objects.exists()


@db
def test_the_chat_page_shows_my_earlier_rating(ada: Client, user: User) -> None:
    turn, _ = _cited_turn(user)
    _post(ada, turn.pk, {"rating": "down", "reason": "incomplete", "comment": "More please"})
    page = ada.get(f"/c/{turn.conversation_id}/").content.decode()
    assert 'data-rating="down" aria-pressed="true"' in page
    assert 'value="incomplete" checked' in page and "More please" in page
