"""The OpenAI-compatible path end to end against a real local model server (SmolLM2-135M).

The model cannot follow citation instructions, which is exactly what these tests rely on:
the platform, not the model, decides what counts as a citation.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from asgiref.sync import async_to_sync

from apps.analytics.post_turn import CategoryOption, decide_online
from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.providers.configured import json_chat_adapter
from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.routing.llm import (
    MAX_TOKENS,
    ROUTER_SCHEMA,
    SCHEMA_NAME,
    build_messages,
    parse_classification,
)
from apps.answers.routing.types import STRATEGY_FOR_TIER, ClassifierError, Intent, Strategy, Tier
from tests.answers.fakes import ScriptedComposer, handbook_load, providers_fake
from tests.answers.turns import chat_model, turn_events
from tests.conftest import CountingEmbedder
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers it)

pytestmark = [pytest.mark.llm, pytest.mark.django_db]


def test_a_real_model_streams_through_the_whole_turn(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    chat = chat_model(llm_server.base_url, llm_server.model)
    providers = replace(
        providers_fake(embedder),
        composer=OpenAIComposer(chat, timeout_s=120, max_tokens=80),
        fallback_composer=ScriptedComposer(),
        chat=chat,
    )

    turn, events = turn_events(providers, "How many days of annual leave do employees get?")

    types = [e["type"] for e in events]
    # The coalescer may merge a short answer into one piece; streaming itself is checked
    # piece by piece in test_composing_openai. Here: what streamed is what was stored.
    assert types[0] == "classification" and types.count("token") >= 1
    streamed = "".join(e["data"]["text"] for e in events if e["type"] == "token")
    assert streamed == turn.answer
    assert sum(t in {"finished", "failed"} for t in types) == 1
    assert turn.composer == f"openai/{chat.name}" and not turn.fallback_reason
    assert turn.status in {TurnStatus.FINISHED, TurnStatus.FAILED}
    cited = {e["data"]["alias"] for e in events if e["type"] == "citation"}
    aliases = set(turn.context["aliases"])
    assert cited <= aliases  # whatever it wrote, only retrieved chunks became citations
    if turn.status == TurnStatus.FINISHED and not cited and not turn.refused:
        assert turn.unsupported_sentences >= 1  # uncited claims are counted, not hidden


def test_an_unreachable_model_falls_back_to_the_offline_composer(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    dead = chat_model("http://127.0.0.1:9/v1", "none", timeout_s=5)
    providers = replace(
        providers_fake(embedder),
        composer=OpenAIComposer(dead, timeout_s=5),
        fallback_composer=ScriptedComposer(),
    )

    turn, events = turn_events(providers, "How many days of annual leave do employees get?")

    assert events[-1]["type"] == "finished"
    assert turn.composer == "scripted" and turn.fallback_reason.startswith("openai/none")


def test_post_turn_structured_output_from_a_real_model(llm_server: LocalLLMServer) -> None:
    conversation = Conversation.objects.create()
    turn = Turn.objects.create(
        conversation=conversation,
        index=1,
        question="How do I install the VPN client?",
        answer="Install the WireGuard client and import the profile.",
        status=TurnStatus.FINISHED,
    )
    options = [
        CategoryOption(1, "IT support", "computers, VPN, accounts"),
        CategoryOption(2, "HR", "leave, pay, hiring"),
    ]

    chat = chat_model(llm_server.base_url, llm_server.model)

    decision = decide_online(chat, turn=turn, options=options, aliases=["c1", "c2"])

    # The model decided (a reply that is not JSON raises, it is not papered over here).
    assert decision.classifier == chat.name
    ids = [cid for cid, _ in decision.categories]
    assert set(ids) <= {1, 2} and len(ids) == len(set(ids))  # enum-bound and de-duplicated
    assert set(decision.attributed_aliases) <= {"c1", "c2"}
    assert decision.title is None or 0 < len(decision.title) <= 200


def test_llm_router_asks_a_real_server_and_reads_its_reply_strictly(
    llm_server: LocalLLMServer,
) -> None:
    # A 135M model cannot be relied on to fill the schema (it may stop mid-object), so the
    # classification itself is not asserted; what must hold is that a real server accepts the
    # structured-output request and answers it, and that the reply either reads as the
    # model's own classification or is refused as a ClassifierError (then the caller falls
    # back), never anything else.
    query = "how do I reset my password?"
    chat = json_chat_adapter(chat_model(llm_server.base_url, llm_server.model))

    raw = async_to_sync(chat.complete_json)(
        messages=build_messages(query=query, history=()),
        schema=ROUTER_SCHEMA,
        schema_name=SCHEMA_NAME,
        max_tokens=MAX_TOKENS,
    )

    assert raw.strip()
    try:
        result = parse_classification(raw, query=query)
    except ClassifierError:
        return
    assert result.classifier == "llm" and not result.fallback_reason
    assert result.intent in set(Intent) and result.tier in set(Tier)
    assert result.strategy is STRATEGY_FOR_TIER[result.tier]  # the tier decides, not the model
    assert result.language == "en"  # detected from the query, never taken from the model


def test_hyde_with_a_real_model_adds_a_recorded_variant(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    chat = chat_model(llm_server.base_url, llm_server.model)
    # A generous budget: on a loaded machine the default would time out, and a timeout is
    # recorded as a skip, which this test must not accept.
    retriever = Retriever(
        embedder=embedder, chat=chat, config=RetrievalConfig(expansion_timeout_s=120)
    )

    result = async_to_sync(retriever.retrieve)(
        RetrievalRequest(query="annual leave days", strategy=Strategy.MODERATE)
    )

    # The passage was generated and searched with, not skipped because the model failed.
    (hyde,) = [v for v in result.trace.variants if v.kind == "hyde"]
    assert hyde.text.strip() and not hyde.skipped_reason
    assert result.trace.models["hyde"] == chat.name
    assert {"hyde:generate", "dense:hyde"} <= set(result.trace.timings_ms)
