"""Conversations and turns over the REST API: owner only, paginated, renamed and deleted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from apps.answers.models import Citation, Conversation, Turn, TurnEvent, TurnStatus
from apps.corpus.models import Chunk
from tests.factories import (
    CitationFactory,
    ConversationFactory,
    TurnEventFactory,
    TurnFactory,
)

pytestmark = pytest.mark.django_db


def test_lists_only_my_conversations_with_their_turn_counts(
    api: APIClient, user: User, other: User
) -> None:
    mine = ConversationFactory.create(user=user, title="Leave")
    TurnFactory.create_batch(2, conversation=mine)
    ConversationFactory.create(user=other, title="Not mine")

    body = api.get("/api/conversations/").json()

    assert body["count"] == 1 and body["next"] is None
    (row,) = body["results"]
    assert row["id"] == str(mine.pk) and row["title"] == "Leave" and row["turn_count"] == 2
    assert {"created_at", "updated_at"} <= set(row)


def test_lists_are_paginated_with_a_default_and_a_chosen_page_size(
    api: APIClient, user: User
) -> None:
    ConversationFactory.create_batch(30, user=user)

    first = api.get("/api/conversations/").json()
    assert first["count"] == 30 and len(first["results"]) == 25  # RAG_API_PAGE_SIZE's default
    assert first["next"].endswith("/api/conversations/?page=2")
    second = api.get(first["next"]).json()
    assert len(second["results"]) == 5 and second["previous"] is not None
    ids = {r["id"] for r in first["results"]} | {r["id"] for r in second["results"]}
    assert len(ids) == 30

    small = api.get("/api/conversations/", {"page_size": 7}).json()
    assert len(small["results"]) == 7
    capped = api.get("/api/conversations/", {"page_size": 1000}).json()
    assert len(capped["results"]) == 30  # under the cap of 100 anyway
    assert api.get("/api/conversations/", {"page": 9}).status_code == 404


def test_detail_has_the_turns_in_order_with_their_citations(api: APIClient, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    second = TurnFactory.create(conversation=conversation, index=2, followups=["And sick leave?"])
    first = TurnFactory.create(conversation=conversation, index=1)
    citation = CitationFactory.create(turn=second, alias="c1", position=10)

    body = api.get(f"/api/conversations/{conversation.pk}/").json()

    assert [t["id"] for t in body["turns"]] == [first.pk, second.pk]
    turn = body["turns"][1]
    assert turn["question"] == second.question and turn["answer"] == second.answer
    assert turn["status"] == "finished" and turn["action"] == "answer"
    assert turn["intent"] == "factual_question" and turn["refused"] is False
    assert turn["confidence"] == 0.8 and turn["confidence_band"] == "green"
    assert turn["followups"] == ["And sick leave?"] and turn["error"] is None
    assert {"created_at", "finished_at"} <= set(turn)
    (cited,) = turn["citations"]
    assert cited == {
        "alias": "c1",
        "kind": "cited",
        "document": citation.document_id,
        "chunk": citation.chunk_id,
        "chunk_index": citation.chunk.index,  # type: ignore[union-attr]
        "title": citation.title,
        "source_file": citation.source_file,
        "page": None,
        "domain": "",
        "snippet": citation.snippet,
        "position": 10,
    }


def test_someone_elses_conversation_and_turn_are_not_found(api: APIClient, other: User) -> None:
    conversation = ConversationFactory.create(user=other, title="Private")
    turn = TurnFactory.create(conversation=conversation)

    for path in (
        f"/api/conversations/{conversation.pk}/",
        f"/api/conversations/{conversation.pk}/turns/",
        f"/api/turns/{turn.pk}/",
    ):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "not_found"
    assert api.patch(f"/api/conversations/{conversation.pk}/", {"title": "Mine"}).status_code == 404
    assert api.delete(f"/api/conversations/{conversation.pk}/").status_code == 404
    conversation.refresh_from_db()
    assert conversation.title == "Private" and Turn.objects.filter(pk=turn.pk).exists()


def test_turns_of_a_conversation_and_one_turn(api: APIClient, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    turns = [TurnFactory.create(conversation=conversation, index=i) for i in (1, 2, 3)]
    TurnFactory.create(
        conversation=ConversationFactory.create(user=user)
    )  # another conversation of mine

    listed = api.get(f"/api/conversations/{conversation.pk}/turns/", {"page_size": 2}).json()
    assert listed["count"] == 3 and [t["index"] for t in listed["results"]] == [1, 2]

    failed = TurnFactory.create(
        conversation=conversation,
        index=4,
        status=TurnStatus.FAILED,
        error_code="model_timeout",
        error_message="The model did not answer in time.",
    )
    one = api.get(f"/api/turns/{failed.pk}/").json()
    assert one["id"] == failed.pk and one["conversation"] == str(conversation.pk)
    assert one["error"] == {"code": "model_timeout", "message": "The model did not answer in time."}
    assert api.get(f"/api/turns/{turns[0].pk}/").json()["error"] is None
    assert api.get(f"/api/turns/{turns[0].pk}/").json()["refusal_reason"] == ""


def test_a_refused_turn_says_why(api: APIClient, user: User) -> None:
    turn = TurnFactory.create(
        conversation=ConversationFactory.create(user=user),
        refused=True,
        confidence=0.21,
        confidence_band="red",
        refusal_reason="evidence 0.48 below 0.53",
    )

    body = api.get(f"/api/turns/{turn.pk}/").json()

    assert body["refused"] is True and body["refusal_reason"] == "evidence 0.48 below 0.53"


def test_a_citation_outlives_its_chunk_and_document(api: APIClient, user: User) -> None:
    citation = CitationFactory.create(
        turn=TurnFactory.create(conversation=ConversationFactory.create(user=user))
    )
    # What the turn could read when asked: the owner reads it still, so even the citation of a
    # document deleted since is theirs to see (the replay filter withholds it from a reader
    # who lost one of those collections: nobody can say which one the document was in).
    citation.turn.readable_collections = [citation.document.collection_id]  # type: ignore[union-attr]
    citation.turn.save(update_fields=["readable_collections"])
    title, snippet = citation.title, citation.snippet
    citation.chunk.document.delete()  # type: ignore[union-attr]  # re-ingested or removed: chunk and document are gone
    assert not Chunk.objects.exists()

    (cited,) = api.get(f"/api/turns/{citation.turn_id}/").json()["citations"]

    assert cited["chunk"] is None and cited["document"] is None
    assert cited["chunk_index"] is None and cited["domain"] is None
    assert cited["title"] == title and cited["snippet"] == snippet


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("", "title: This field may not be blank."),
        ("   \n ", "title: This field may not be blank."),
        ("x" * 201, "title: Ensure this field has no more than 200 characters."),
        (None, "title: This field may not be null."),
        # Refused before the serializer, by the input-hygiene middleware, for every JSON field.
        ("nul\x00byte", "body.title contains a NUL character"),
    ],
)
def test_rename_refuses_a_bad_title(
    api: APIClient, user: User, title: str | None, message: str
) -> None:
    conversation = ConversationFactory.create(user=user, title="Before")

    response = api.patch(f"/api/conversations/{conversation.pk}/", {"title": title}, format="json")

    assert response.status_code == 400
    assert response.json() == {"error": {"code": "invalid_request", "message": message}}
    conversation.refresh_from_db()
    assert conversation.title == "Before"


def test_rename_sets_a_one_line_title(api: APIClient, user: User) -> None:
    conversation = ConversationFactory.create(user=user, title="Before")

    response = api.patch(
        f"/api/conversations/{conversation.pk}/",
        {"title": "  Annual\n leave   plans ", "id": "ignored"},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["title"] == "Annual leave plans"
    assert response.json()["id"] == str(conversation.pk)
    conversation.refresh_from_db()
    assert conversation.title == "Annual leave plans"
    assert api.put(f"/api/conversations/{conversation.pk}/", {"title": "x"}).status_code == 405


def test_delete_hides_the_conversation_and_the_audit_keeps_its_turns(
    api: APIClient, user: User
) -> None:
    conversation = ConversationFactory.create(user=user)
    turn = TurnFactory.create(conversation=conversation)
    TurnEventFactory.create(turn=turn)
    CitationFactory.create(turn=turn)
    kept = ConversationFactory.create(user=user)

    response = api.delete(f"/api/conversations/{conversation.pk}/")

    assert response.status_code == 204
    listed = api.get("/api/conversations/").json()["results"]
    assert [c["id"] for c in listed] == [str(kept.pk)]
    assert api.get(f"/api/conversations/{conversation.pk}/").status_code == 404
    assert api.get(f"/api/turns/{turn.pk}/").status_code == 404
    assert api.delete(f"/api/conversations/{conversation.pk}/").status_code == 404
    # The audit still has every row, marked with when its owner deleted it.
    conversation.refresh_from_db()
    assert conversation.deleted_at is not None
    assert Turn.objects.filter(pk=turn.pk).exists() and TurnEvent.objects.exists()
    assert Citation.objects.exists()


def test_delete_waits_for_a_question_still_being_answered(api: APIClient, user: User) -> None:
    conversation = ConversationFactory.create(user=user)
    TurnFactory.create(conversation=conversation, status=TurnStatus.STREAMING)

    response = api.delete(f"/api/conversations/{conversation.pk}/")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert Conversation.objects.filter(pk=conversation.pk).exists()


def test_signed_out_requests_are_refused(user: User) -> None:
    ConversationFactory.create(user=user)
    response = APIClient().get("/api/conversations/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert response.json()["error"]["code"] == "unauthenticated"


def test_session_writes_need_the_csrf_token(user: User) -> None:
    conversation = ConversationFactory.create(user=user, title="Before")
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(user)

    refused = browser.patch(
        f"/api/conversations/{conversation.pk}/", {"title": "After"}, format="json"
    )
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]["message"]
    assert browser.get("/api/conversations/").status_code == 200  # reads need no token

    browser.get("/accounts/login/")  # sets the csrftoken cookie, as any page does
    token = browser.cookies["csrftoken"].value
    accepted = browser.patch(
        f"/api/conversations/{conversation.pk}/",
        {"title": "After"},
        format="json",
        headers={"X-CSRFToken": token},
    )
    assert accepted.status_code == 200
    conversation.refresh_from_db()
    assert conversation.title == "After"


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "status"),
    [
        ("patch", "{conversation}", "[1, 2]", "application/json", 400),
        ("patch", "{conversation}", "hello", "text/plain", 415),
        ("patch", "{conversation}", '{"title": "\\ud800"}', "application/json", 400),
        ("patch", "{conversation}", '{"title": {"a": 1}}', "application/json", 400),
        ("patch", "{conversation}", "{not json", "application/json", 400),
        ("get", "/api/conversations/?page=²", None, None, 404),
        ("get", "/api/conversations/?page=-1", None, None, 404),
        ("get", "/api/turns/99999999999999999999/", None, None, 404),
    ],
)
def test_bad_input_gets_a_4xx_with_a_message(
    api: APIClient,
    user: User,
    method: str,
    path: str,
    body: str | None,
    content_type: str | None,
    status: int,
) -> None:
    conversation = ConversationFactory.create(user=user, title="Before")
    url = path.format(conversation=f"/api/conversations/{conversation.pk}/")
    extra = {"data": body, "content_type": content_type} if body is not None else {}

    response = getattr(api, method)(url, **extra)

    assert response.status_code == status
    assert response.json()["error"]["message"]
    conversation.refresh_from_db()
    assert conversation.title == "Before"
