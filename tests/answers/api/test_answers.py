"""POST /api/answers/: one question, the whole answer in one JSON body, through the same
`turn_open` and pipeline as the WebSocket and SSE (fake providers over a tiny handbook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Citation, Turn, TurnClient, TurnEvent, TurnStatus
from apps.answers.providers.registry import Providers, providers_build_override
from apps.corpus.models import Chunk, Document
from tests.answers.fakes import ANSWER_TEXT, handbook_load
from tests.answers.sse import REJECTED
from tests.conftest import CountingEmbedder
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def ask(client: APIClient, body: object) -> Any:
    return client.post("/api/answers/", body, format="json")


def test_the_answer_comes_back_whole_with_its_sources(
    api: APIClient, user: User, use_providers: Callable[..., None]
) -> None:
    response = ask(api, {"question": "How many days of annual leave?"})

    assert response.status_code == 200
    body = response.json()
    turn = Turn.objects.get()
    assert body["id"] == turn.pk and body["conversation"] == str(turn.conversation_id)
    assert turn.conversation.user == user and turn.status == TurnStatus.FINISHED
    assert turn.client == TurnClient.API
    assert body["status"] == "finished" and body["error"] is None
    assert body["answer"] == ANSWER_TEXT and body["action"] == "answer"
    assert body["question"] == "How many days of annual leave?"
    assert body["refused"] is False
    assert body["confidence"] == turn.confidence and 0 <= body["confidence"] <= 1
    assert body["confidence_band"] == turn.confidence_band
    assert body["confidence_band"] in {band.value for band in ConfidenceBand}
    assert body["followups"] == turn.followups and isinstance(body["followups"], list)
    # The same events as a stream would have carried are stored, ending with `finished`.
    assert TurnEvent.objects.filter(turn=turn).order_by("seq").last().type == "finished"  # type: ignore[union-attr]

    (citation,) = body["citations"]
    stored = Citation.objects.select_related("chunk__document").get()
    assert citation["alias"] == "c1" and citation["kind"] == "cited"
    assert citation["source_file"] == "leave.md" == stored.source_file
    assert citation["document"] == stored.document_id and citation["chunk"] == stored.chunk_id
    assert citation["chunk_index"] == stored.chunk.index  # type: ignore[union-attr]
    assert citation["title"] == stored.title and citation["page"] is None
    assert citation["domain"] == "" and "twenty-six days" in citation["snippet"]

    metadata = body["retrieval_metadata"]
    assert metadata["models"]["composer"] == "scripted"
    assert metadata["models"]["embedder"] == "test/hashed-bow"
    assert metadata["retrieved"] >= metadata["used_in_context"] >= 1
    assert metadata["retrieved"] <= Chunk.objects.count()
    assert 0 < metadata["context_tokens"] <= metadata["context_budget_tokens"] == 1800
    latency = metadata["latency_ms"]
    assert {"total_ms", "compose_ms"} <= set(latency)
    assert any(stage.startswith("retrieval.dense") for stage in latency)
    assert all(isinstance(ms, float | int) and ms >= 0 for ms in latency.values())


def test_a_second_question_continues_the_conversation(
    api: APIClient, use_providers: Callable[..., None]
) -> None:
    first = ask(api, {"question": "How many days of annual leave?"}).json()
    second = ask(api, {"question": "And the VPN?", "conversation": first["conversation"]}).json()

    assert second["conversation"] == first["conversation"]
    assert Turn.objects.get(pk=second["id"]).index == 2


def test_collections_limit_what_is_cited(
    api: APIClient, use_providers: Callable[..., None], embedder: CountingEmbedder
) -> None:
    other = handbook_load(embedder, name="Other")  # the same files in a second collection

    body = ask(api, {"question": "How many days of annual leave?", "collections": ["Other"]}).json()

    cited = Document.objects.filter(pk__in=[c["document"] for c in body["citations"]])
    assert cited.exists() and {d.collection_id for d in cited} == {other.pk}


@pytest.mark.parametrize(("body", "status", "code"), REJECTED)
def test_refusals_get_the_same_code_status_and_message_as_sse(
    api: APIClient, use_providers: Callable[..., None], body: object, status: int, code: str
) -> None:
    response = ask(api, body)
    streamed = api.post("/api/turns/", body, format="json", headers={"Accept": "text/event-stream"})

    assert response.status_code == streamed.status_code == status
    assert response.json() == streamed.json()
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]
    assert not Turn.objects.exists()


def test_someone_elses_conversation_is_not_found(
    api: APIClient, other: User, use_providers: Callable[..., None]
) -> None:
    theirs = ConversationFactory.create(user=other)

    response = ask(api, {"question": "Leave?", "conversation": str(theirs.pk)})

    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert not Turn.objects.exists()


def test_malformed_json_is_a_400(api: APIClient) -> None:
    response = api.post("/api/answers/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"


def test_beyond_the_per_minute_limit_it_is_429(
    api: APIClient, use_providers: Callable[..., None], settings: Any
) -> None:
    settings.RAG_ASKS_PER_MINUTE = 1
    assert ask(api, {"question": "How many days of annual leave?"}).status_code == 200

    response = ask(api, {"question": "And the VPN?"})

    assert response.status_code == 429 and response.json()["error"]["code"] == "rate_limited"
    assert Turn.objects.count() == 1


def test_a_failed_turn_returns_its_error_code(api: APIClient) -> None:
    def no_providers() -> Providers:
        raise RuntimeError("no model configured")

    with providers_build_override(no_providers):
        response = ask(api, {"question": "How many days of annual leave?"})

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "failed" and body["answer"] == ""
    assert body["error"]["code"] == "model_unavailable" and body["error"]["message"]
    assert Turn.objects.get(pk=body["id"]).status == TurnStatus.FAILED


def test_signed_out_it_is_401(db: None) -> None:
    response = ask(APIClient(), {"question": "Leave?"})
    assert response.status_code == 401
    assert not Turn.objects.exists()
