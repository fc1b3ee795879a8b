"""Issue 24 with a chat model configured: fallbacks named in evaluate_answers, cut replies
marked cut, text shown as it is written, the end never held back by follow-ups, token caps
as settings, and no badge or source for a content-free answer. The real local model
(SmolLM2) serves where its own behaviour is tested; a scripted OpenAI-compatible server
where the timing must be exact."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import LazySettings
from django.core.management import CommandError, call_command
from django.db import connections

from apps.answers.composing.attribution import answer_attribute
from apps.answers.composing.confidence import confidence_band
from apps.answers.composing.conversational import ConversationalResponder
from apps.answers.composing.extractive import ExtractiveComposer
from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.composing.prompts import FOLLOWUP_SCHEMA_NAME
from apps.answers.events import Envelope
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.providers.registry import Providers, _configured_providers, providers_override
from apps.answers.retrieval.types import Candidate, ContextChunk, ContextWindow
from apps.answers.routing.types import Intent
from apps.answers.turn.compose_stream import ComposeOutcome, answer_confidence
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import turn_start
from tests.answers.chat_server import dribbling, scripted_server, slow_model, sse_chunk
from tests.answers.fakes import (
    FixedClassifier,
    ScriptedComposer,
    classification,
    event_types,
    handbook_load,
    providers_fake,
    retrieved_chunk,
    turn_collected,
)
from tests.answers.turns import QUESTION, chat_model
from tests.conftest import CountingEmbedder
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers it)

# Turns run on their own loop and its database threads: those must see the test's rows.
pytestmark = pytest.mark.django_db(transaction=True)
DOWN = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
SMALL_TALK = classification(intent=Intent.CONVERSATIONAL)


@pytest.fixture(autouse=True)
def _database_threads_closed() -> Iterator[None]:
    yield
    asyncio.run(sync_to_async(connections.close_all)())


def _with_fallback(embedder: CountingEmbedder, composer: OpenAIComposer) -> Providers:
    return replace(
        providers_fake(embedder), composer=composer, fallback_composer=ExtractiveComposer(embedder)
    )


# --- 3. evaluate_answers names what answered --------------------------------------------


def _evaluate(
    dataset: Path, tmp_path: Path, providers: Providers, *extra: str
) -> dict[str, object]:
    target = tmp_path / "answers.json"
    with providers_override(providers):
        call_command(
            "evaluate_answers",
            *("--dataset", str(dataset), "--json", str(target), *extra),
            stdout=StringIO(),
            stderr=StringIO(),
        )
    return json.loads(target.read_text())


def test_with_the_model_down_evaluate_answers_reports_fallbacks_not_the_model(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    composer = OpenAIComposer(chat_model(DOWN, "small-model", timeout_s=2), timeout_s=2)
    providers = _with_fallback(embedder, composer)

    result = _evaluate(dataset, tmp_path, providers)

    # Before: "composer": "openai/small-model", 0 errors, the extractive composer's figures.
    assert result["composer"] == "extractive" != result["configured_composer"]
    assert result["fallbacks"] == 3
    reasons = result["fallback_reasons"]
    assert isinstance(reasons, dict) and list(reasons) == ["openai/small-model: model_unavailable"]
    parts = result["by_composer"]
    assert isinstance(parts, dict) and list(parts) == ["extractive"]
    questions = result["questions"]
    assert isinstance(questions, list) and {q["composer"] for q in questions} == {"extractive"}


def test_strict_fails_a_run_with_any_fallback(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    composer = OpenAIComposer(chat_model(DOWN, "small-model", timeout_s=2), timeout_s=2)

    with pytest.raises(CommandError, match="3 answers came from a fallback"):
        _evaluate(dataset, tmp_path, _with_fallback(embedder, composer), "--strict")


@pytest.mark.llm
def test_the_model_s_own_answers_are_figured_under_its_name(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder, llm_server: LocalLLMServer
) -> None:
    chat = chat_model(llm_server.base_url, llm_server.model)
    composer = OpenAIComposer(chat, timeout_s=120, max_tokens=48)

    result = _evaluate(dataset, tmp_path, _with_fallback(embedder, composer), "--limit", "1")

    parts = result["by_composer"]
    assert isinstance(parts, dict)
    answered = sum(p["answerable"] + p["unanswerable"] for p in parts.values())
    assert answered + int(result["composer_errors"]) == 1  # type: ignore[call-overload]
    assert result["fallbacks"] == 0 and set(parts) <= {composer.name}
    assert result["configured_composer"] == composer.name


# --- 4. a small-talk reply cut by a limit is cut ----------------------------------------


def test_a_small_talk_reply_cut_by_its_time_limit_is_kept_as_partial(
    embedder: CountingEmbedder,
) -> None:
    words = ["I am ", "an AI ", "assistant ", "created ", "to help ", "you."]

    async def run() -> tuple[list[Envelope], int]:
        async with slow_model(dribbling(words, delay_s=4.0)) as url:
            responder = ConversationalResponder(chat_model(url, "slow"), timeout_s=10.0)
            providers = replace(
                providers_fake(embedder, classifier=FixedClassifier(SMALL_TALK)),
                responder=responder,
            )
            turn = await asyncio.to_thread(_turn_started, "Who are you?")
            return [e async for e in turn_run(turn_id=turn, providers=providers)], turn

    events, turn_id = async_to_sync(run)()

    # Before: stored and shown as finished ("I am an AI assistant created").
    assert events[-1]["type"] == "failed" and events[-1]["data"]["code"] == "model_interrupted"
    stored = Turn.objects.get(pk=turn_id)
    assert stored.status == TurnStatus.FAILED and stored.partial
    assert stored.answer.startswith("I am an AI")


@pytest.mark.llm
def test_a_real_small_talk_reply_cut_by_its_token_cap_is_truncated(
    embedder: CountingEmbedder, llm_server: LocalLLMServer
) -> None:
    chat = chat_model(llm_server.base_url, llm_server.model)
    responder = ConversationalResponder(chat, timeout_s=120, max_tokens=3)
    providers = replace(
        providers_fake(embedder, classifier=FixedClassifier(SMALL_TALK)), responder=responder
    )

    turn, events = turn_collected(providers, "Hello! Who are you?")

    assert events[-1]["type"] == "failed" and events[-1]["data"]["code"] == "answer_truncated"
    assert turn.partial and turn.answer


def _turn_started(question: str) -> int:
    return turn_start(conversation=Conversation.objects.create(), question=question).pk


# --- 6. text is shown as it is written ----------------------------------------------------


def test_held_text_is_sent_on_a_timer_while_the_model_is_still_writing(
    embedder: CountingEmbedder, settings: LazySettings
) -> None:
    settings.RAG_STREAM_FLUSH_S = 0.25
    handbook_load(embedder)
    # No boundary and under the coalescer's 60 characters, then a long pause.
    pieces = ["Employees take ", "twenty-six days", " of annual leave a year [c1]."]
    last_piece_at: list[float] = []

    async def respond(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        writer.write(head.encode())
        for index, piece in enumerate(pieces):
            if index == len(pieces) - 1:
                last_piece_at.append(time.monotonic())
            writer.write(sse_chunk(piece))
            await writer.drain()
            await asyncio.sleep(4.0)
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()

    async def run() -> float:
        async with slow_model(respond) as url:
            composer = OpenAIComposer(chat_model(url, "slow"), timeout_s=60)
            providers = replace(providers_fake(embedder), composer=composer)
            turn = await sync_to_async(_turn_started)(QUESTION)
            async for envelope in turn_run(turn_id=turn, providers=providers):
                if envelope["type"] == "token":
                    return time.monotonic()
        raise AssertionError("no text")

    first_text_at = async_to_sync(run)()

    # The first words were shown while the model paused, before it wrote its last piece.
    # Before: held until the rest came.
    assert not last_piece_at or first_text_at < last_piece_at[0]


def test_after_a_fallback_the_model_is_not_asked_for_follow_ups(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)

    async def never_answers(body: bytes, reader: asyncio.StreamReader, writer: object) -> None:
        await reader.read()

    async def run() -> tuple[list[Envelope], list[bytes]]:
        async with scripted_server(never_answers) as (url, bodies):
            chat = chat_model(url, "busy", timeout_s=6, first_token_timeout_s=1.0)
            # A fallback that answers (cites c1) rather than refuses: a refusal's
            # suggestions never asked the model.
            providers = replace(
                providers_fake(embedder),
                composer=OpenAIComposer(chat, timeout_s=6),
                fallback_composer=ScriptedComposer(),
                chat=chat,
            )
            turn = await sync_to_async(_turn_started)(QUESTION)
            events = [e async for e in turn_run(turn_id=turn, providers=providers)]
            return events, list(bodies)

    events, bodies = async_to_sync(run)()

    assert event_types(events)[-1] == "finished"
    # Before: a request for suggestions too, and the end held until its limit.
    assert not [body for body in bodies if FOLLOWUP_SCHEMA_NAME.encode() in body]


def test_the_follow_up_call_is_bounded_by_its_setting(
    embedder: CountingEmbedder, settings: LazySettings
) -> None:
    settings.RAG_FOLLOWUPS_TIMEOUT_S = 0.3
    handbook_load(embedder)

    async def never_answers(body: bytes, reader: asyncio.StreamReader, writer: object) -> None:
        await reader.read()

    async def run() -> tuple[list[Envelope], float]:
        async with scripted_server(never_answers) as (url, _bodies):
            # The scripted composer answers; the busy model is asked only for suggestions.
            providers = replace(
                providers_fake(embedder), chat=chat_model(url, "busy", timeout_s=40)
            )
            turn = await sync_to_async(_turn_started)(QUESTION)
            started = time.monotonic()
            events = [e async for e in turn_run(turn_id=turn, providers=providers)]
            return events, time.monotonic() - started

    events, took_s = async_to_sync(run)()

    # Before: the end waited for the chat model's whole limit (40 s here).
    assert event_types(events)[-1] == "finished" and took_s < 25.0


# --- 7. token caps are settings ---------------------------------------------------------


def test_every_token_cap_comes_from_settings(
    settings: LazySettings, embedder: CountingEmbedder
) -> None:
    settings.OPENAI_BASE_URL, settings.RAG_CHAT_MODEL, settings.RAG_ROUTER = DOWN, "m", "llm"
    settings.RAG_ANSWER_MAX_TOKENS, settings.RAG_SMALL_TALK_MAX_TOKENS = 301, 31
    settings.RAG_HYDE_MAX_TOKENS, settings.RAG_BRIDGE_MAX_TOKENS = 101, 11
    settings.RAG_REWRITE_MAX_TOKENS, settings.RAG_ROUTER_MAX_TOKENS = 21, 201

    providers = _configured_providers.__wrapped__()

    assert isinstance(providers.composer, OpenAIComposer)
    assert providers.composer._max_tokens == 301
    assert isinstance(providers.responder, ConversationalResponder)
    assert providers.responder._max_tokens == 31
    config = providers.retriever.config
    assert (config.hyde_max_tokens, config.bridge_max_tokens) == (101, 11)
    assert providers.rewrite_max_tokens == 21
    assert providers.classifier.primary.max_tokens == 201  # type: ignore[attr-defined]


@pytest.mark.llm
def test_the_answer_s_token_cap_setting_cuts_a_real_model_s_answer(
    settings: LazySettings, embedder: CountingEmbedder, llm_server: LocalLLMServer
) -> None:
    settings.OPENAI_BASE_URL, settings.RAG_CHAT_MODEL = llm_server.base_url, llm_server.model
    settings.RAG_CHAT_TIMEOUT_S = settings.RAG_CHAT_FIRST_TOKEN_TIMEOUT_S = 120.0
    settings.RAG_ANSWER_MAX_TOKENS = 3
    handbook_load(embedder)
    configured = _configured_providers.__wrapped__()
    providers = replace(providers_fake(embedder), composer=configured.composer)

    turn, events = turn_collected(providers, QUESTION)

    assert events[-1]["data"]["code"] == "answer_truncated" and turn.partial


# --- 8. a content-free answer: no green badge, no source -----------------------------------


def test_a_confident_composer_cannot_put_a_content_free_answer_in_the_green() -> None:
    sure = Candidate(1, dense_rank=1, dense_score=0.99, keyword_rank=1)
    chunks = [retrieved_chunk(1, "Employees take twenty-six days of leave.", candidate=sure)]
    full = ComposeOutcome(text="Employees take twenty-six days of leave.", support=0.95)
    empty = ComposeOutcome(text="| --- | --- |\n|  |  |", support=0.95)

    assert confidence_band(answer_confidence(outcome=full, chunks=chunks)) == "green"
    # Before: the same badge for a table rule with no words in it.
    assert confidence_band(answer_confidence(outcome=empty, chunks=chunks)) == "red"


@pytest.mark.llm
def test_a_real_model_s_answer_gets_a_badge_no_higher_than_its_markers_show(
    embedder: CountingEmbedder, llm_server: LocalLLMServer
) -> None:
    handbook_load(embedder)
    composer = OpenAIComposer(chat_model(llm_server.base_url, llm_server.model), timeout_s=120)
    providers = replace(providers_fake(embedder), composer=composer)

    turn, _ = turn_collected(providers, QUESTION)

    inputs = turn.confidence_inputs
    if inputs.get("support_source") == "self-reported":
        signals = inputs["signals"]
        assert inputs["support"] <= signals["marker_coverage"]


def test_a_table_row_of_small_words_is_attributed_to_no_passage() -> None:
    text = "This is where the form is, and that is which one there is to fill in today."
    context = ContextWindow((ContextChunk("c1", retrieved_chunk(1, text), text),), 1000, 20, ())

    found = answer_attribute(text="| This | That | Which | There | Where |", context=context)

    assert found == []
