"""The fallbacks the provider guide promises, through whole turns: the LLM router, small talk
and embeddings. The real local model (SmolLM2) serves where a model is involved; a closed
port stands in for an endpoint that is down."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from asgiref.sync import async_to_sync
from django.conf import LazySettings
from django.core.checks import run_checks

from apps.answers.composing.conversational import ConversationalResponder
from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.models import TurnStatus
from apps.answers.providers.configured import json_chat_adapter
from apps.answers.providers.openai_chat import OpenAIChatModel
from apps.answers.providers.registry import Providers, _configured_providers
from apps.answers.retrieval.rerank import RemoteReranker
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.routing.fallback import FallbackClassifier
from apps.answers.routing.llm import LLMClassifier
from apps.answers.routing.trained import TrainedClassifier
from apps.answers.routing.types import Intent, TurnAction
from apps.corpus.models import Chunk
from apps.corpus.search.embedders import (
    EmbedderError,
    EmbeddingSpaceMismatch,
    FallbackEmbedder,
    configured_model_id,
)
from tests.answers.fakes import FixedClassifier, classification, handbook_load, providers_fake
from tests.answers.turns import QUESTION, chat_model, turn_events
from tests.conftest import CountingEmbedder
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers it)

pytestmark = pytest.mark.django_db
DOWN = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


def llm_router(chat: OpenAIChatModel, timeout_s: float) -> FallbackClassifier:
    llm = LLMClassifier(json_chat_adapter(chat), timeout_s=timeout_s)
    return FallbackClassifier(llm, TrainedClassifier.from_artefact(), timeout_s=timeout_s)


# --- the LLM router ----------------------------------------------------------------------


def test_with_the_endpoint_down_the_trained_router_answers(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    router = llm_router(chat_model(DOWN, "none", timeout_s=2), timeout_s=2)
    providers = replace(providers_fake(embedder), classifier=router, router_timeout_s=4)

    turn, events = turn_events(providers, QUESTION)

    # Before: the policy's fallback (confidence 0) made every question a clarifying question.
    assert turn.action != TurnAction.CLARIFY and events[-1]["type"] == "finished"
    assert turn.classification["classifier"] == "trained"
    assert turn.classification["fallback_reason"].startswith("llm failed: ClassifierError")
    assert turn.fallback_reason.startswith("router llm failed")
    assert turn.prompt_tokens is None  # a refused connection spent no tokens


@pytest.mark.llm
def test_a_real_model_past_its_time_limit_hands_over_to_the_trained_router(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    router = llm_router(chat_model(llm_server.base_url, llm_server.model), timeout_s=0.05)
    providers = replace(providers_fake(embedder), classifier=router, router_timeout_s=3)

    turn, _ = turn_events(providers, QUESTION)

    assert turn.classification["classifier"] == "trained"
    assert turn.fallback_reason == "router llm timed out after 0.05 s"
    assert turn.action != TurnAction.CLARIFY


def test_the_configured_llm_router_has_the_trained_one_behind_it(
    settings: LazySettings, embedder: CountingEmbedder
) -> None:
    settings.OPENAI_BASE_URL, settings.RAG_CHAT_MODEL, settings.RAG_ROUTER = DOWN, "m", "llm"
    settings.RAG_ROUTER_TIMEOUT_S = 3.0

    providers = _configured_providers.__wrapped__()

    assert isinstance(providers.classifier, FallbackClassifier)
    assert isinstance(providers.classifier.fallback, TrainedClassifier)
    # The trained router gets its turn after the LLM's limit, not cut off with it.
    assert providers.router_timeout_s > settings.RAG_ROUTER_TIMEOUT_S


def test_the_fusion_comes_from_settings(settings: LazySettings, embedder: CountingEmbedder) -> None:
    settings.RAG_FUSION, settings.RAG_FUSION_DENSE_SHARE = "rrf", 0.3

    config = _configured_providers.__wrapped__().retriever.config

    assert (config.fusion, config.dense_share) == ("rrf", 0.3)


def test_every_model_time_limit_comes_from_settings(
    settings: LazySettings, embedder: CountingEmbedder
) -> None:
    settings.OPENAI_BASE_URL, settings.RAG_CHAT_MODEL = DOWN, "m"
    settings.RAG_CHAT_TIMEOUT_S, settings.RAG_CHAT_FIRST_TOKEN_TIMEOUT_S = 90.0, 45.0
    settings.RAG_EXPANSION_TIMEOUT_S, settings.RAG_SMALL_TALK_TIMEOUT_S = 21.0, 22.0
    settings.RAG_RERANK, settings.RAG_RERANK_BASE_URL = "remote", DOWN
    settings.RAG_RERANK_TIMEOUT_S = 23.0

    providers = _configured_providers.__wrapped__()

    chat, composer = providers.chat, providers.composer
    assert isinstance(chat, OpenAIChatModel) and isinstance(composer, OpenAIComposer)
    assert (chat._settings.timeout_s, chat._settings.first_token_timeout_s) == (90.0, 45.0)
    assert composer._timeout_s == 90.0
    assert providers.retriever.config.expansion_timeout_s == 21.0
    assert isinstance(providers.responder, ConversationalResponder)
    assert providers.responder._timeout_s == 22.0
    assert isinstance(providers.retriever.reranker, RemoteReranker)
    assert providers.retriever.reranker._timeout == 23.0
    settings.RAG_CHAT_FIRST_TOKEN_TIMEOUT_S = 200.0  # never past the whole call's limit
    capped = _configured_providers.__wrapped__().chat
    assert isinstance(capped, OpenAIChatModel)
    assert capped._settings.first_token_timeout_s == 90.0


# --- small talk ----------------------------------------------------------------------------


def small_talk(embedder: CountingEmbedder, responder: ConversationalResponder) -> Providers:
    greeting = classification(Intent.CONVERSATIONAL)
    return replace(
        providers_fake(embedder, classifier=FixedClassifier(greeting)), responder=responder
    )


def test_a_small_talk_fallback_is_recorded_as_one(embedder: CountingEmbedder) -> None:
    responder = ConversationalResponder(chat_model(DOWN, "none", timeout_s=2))

    turn, events = turn_events(small_talk(embedder, responder), "Hello!")

    assert events[-1]["type"] == "finished" and turn.answer.startswith("Hello!")
    assert turn.composer == "conversational/offline"
    assert turn.fallback_reason == "conversational/none: model_unavailable"


@pytest.mark.llm
def test_a_real_model_reply_to_small_talk_is_its_own(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    chat = chat_model(llm_server.base_url, llm_server.model)
    responder = ConversationalResponder(chat, timeout_s=120, max_tokens=16)

    turn, _ = turn_events(small_talk(embedder, responder), "Hello!")

    assert turn.status in {TurnStatus.FINISHED, TurnStatus.FAILED}
    assert turn.composer == f"conversational/{llm_server.model}" and not turn.fallback_reason
    assert turn.completion_tokens is not None and 0 < turn.completion_tokens <= 16


# --- embeddings ----------------------------------------------------------------------------


class BrokenEmbedder(CountingEmbedder):
    def embed_query(self, text: str) -> np.ndarray:
        raise EmbedderError("endpoint down")

    def embed_passages(self, texts: Any) -> np.ndarray:
        raise EmbedderError("endpoint down")


class NamedEmbedder(CountingEmbedder):
    def __init__(self, model_id: str) -> None:
        super().__init__()
        self.model_id = model_id


def test_the_offline_embedder_stands_in_only_for_its_own_model() -> None:
    broken = BrokenEmbedder()
    same = FallbackEmbedder(broken, CountingEmbedder())

    assert same.embed_query("leave").shape == (384,)
    with pytest.raises(EmbeddingSpaceMismatch, match="different spaces"):
        FallbackEmbedder(NamedEmbedder("openai/text-embedding-3-small"), CountingEmbedder())


def test_a_query_never_meets_another_models_vectors(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    other = NamedEmbedder("openai/other-model")
    providers = replace(providers_fake(other), classifier=FixedClassifier())

    result = async_to_sync(providers.retriever.retrieve)(
        RetrievalRequest(query="twenty-six days of annual leave")
    )

    # The same words are found by keyword, but the other model's cosine is never taken.
    assert result.chunks
    assert not [c for c in result.trace.candidates if c.dense_rank is not None]
    same = async_to_sync(providers_fake(embedder).retriever.retrieve)(
        RetrievalRequest(query="twenty-six days of annual leave")
    )
    assert [c for c in same.trace.candidates if c.dense_rank is not None]


def test_a_failing_embedder_leaves_keyword_search_and_says_why(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    providers = providers_fake(BrokenEmbedder())

    turn, events = turn_events(providers, QUESTION)

    assert events[-1]["type"] == "finished" and turn.answer
    assert turn.models_used["embedder_error"] == "endpoint down"


def test_stored_vectors_of_another_model_are_reported(
    settings: LazySettings, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    settings.RAG_EMBEDDER, settings.RAG_EMBEDDING_MODEL_ID = "openai", embedder.model_id
    assert not [m for m in run_checks(databases=["default"]) if m.id == "corpus.W002"]
    Chunk.objects.filter(pk=Chunk.objects.first().pk).update(embedding_model="openai/old")  # type: ignore[union-attr]

    found = [m for m in run_checks(databases=["default"]) if m.id == "corpus.W002"]

    assert len(found) == 1 and "1 by openai/old" in found[0].msg
    assert configured_model_id() in found[0].msg
