"""What a model's answer records: token usage, a cut-off answer, sources for an answer without
markers, the answer language, and evaluate_answers going on past a composer error. The real
local model (SmolLM2) serves wherever a model is involved."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command

from apps.answers.composing.attribution import answer_attribute
from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.composing.types import ComposeRequest, ComposerEvent, TextDelta
from apps.answers.models import Citation, CitationKind, TurnStatus
from apps.answers.providers.chat import ChatMessage
from apps.answers.providers.configured import json_chat_adapter
from apps.answers.providers.registry import providers_override
from apps.answers.providers.usage import UsageMeter, usage_meter_close, usage_meter_open
from apps.answers.retrieval.expansion import hyde_passage
from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
from apps.answers.retrieval.types import ContextChunk, ContextWindow
from apps.answers.routing.llm import LLMClassifier
from apps.answers.routing.policy import classify_safely
from apps.answers.routing.types import Strategy, Tier
from tests.answers.chat_server import scripted_server, sse_chunk, sse_response
from tests.answers.fakes import (
    FixedClassifier,
    ScriptedComposer,
    classification,
    handbook_load,
    providers_fake,
    retrieved_chunk,
)
from tests.answers.turns import QUESTION, chat_model, turn_events
from tests.conftest import CountingEmbedder
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers it)

pytestmark = pytest.mark.django_db
COPIED = "Employees take twenty-six days of annual leave every year."


# --- token usage -------------------------------------------------------------------------


@pytest.mark.llm
def test_every_model_call_of_a_turn_adds_its_tokens(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    chat = chat_model(llm_server.base_url, llm_server.model)
    # A moderate question: the model writes a HyDE passage, then the answer.
    moderate = replace(classification(), tier=Tier.T2, strategy=Strategy.MODERATE)
    providers = replace(
        providers_fake(embedder, classifier=FixedClassifier(moderate)),
        retriever=Retriever(
            embedder=embedder, chat=chat, config=RetrievalConfig(expansion_timeout_s=120)
        ),
        composer=OpenAIComposer(chat, timeout_s=120, max_tokens=24),
    )
    hyde = UsageMeter()
    opened = usage_meter_open(hyde)
    try:
        async_to_sync(hyde_passage)(chat, query=QUESTION, timeout_s=120)
    finally:
        usage_meter_close(opened)

    turn, _ = turn_events(providers, QUESTION)

    # The expansion's prompt is counted, and the composer's on top of it.
    assert hyde.calls == 1 and hyde.prompt_tokens > 0
    assert turn.prompt_tokens is not None and turn.prompt_tokens > hyde.prompt_tokens
    assert turn.completion_tokens is not None and turn.completion_tokens > 0
    assert turn.models_used["token_usage"] == "reported"


async def test_a_server_that_reports_no_usage_gets_an_estimate_marked_as_one() -> None:
    async def plain(
        body: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(sse_response(sse_chunk("Twelve"), sse_chunk(" characters")))
        await writer.drain()

    meter = UsageMeter()
    async with scripted_server(plain) as (url, _):
        chat = chat_model(url, "fake")
        opened = usage_meter_open(meter)
        try:
            pieces = [p async for p in chat.stream(messages=[ChatMessage("user", "x" * 40)])]
        finally:
            usage_meter_close(opened)
        await chat.aclose()

    assert "".join(pieces) == "Twelve characters"
    assert (meter.prompt_tokens, meter.completion_tokens) == (10, 5)  # 40 and 17 characters
    assert meter.source == "estimated"


# --- an answer cut off by the token limit ------------------------------------------------


@pytest.mark.llm
def test_an_answer_cut_off_by_the_token_limit_is_partial(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    chat = chat_model(llm_server.base_url, llm_server.model)
    # Two tokens: no reply the model might give ends that soon (at 8 it once said all it had).
    composer = OpenAIComposer(chat, timeout_s=120, max_tokens=2)
    providers = providers_fake(embedder, composer=composer)  # type: ignore[arg-type]

    turn, events = turn_events(providers, QUESTION)

    assert events[-1]["type"] == "failed"
    assert events[-1]["data"]["code"] == "answer_truncated" and not events[-1]["data"]["retryable"]
    assert turn.status == TurnStatus.FAILED and turn.partial and turn.answer
    assert turn.error_message == "The answer reached the model's length limit and is incomplete."


# --- sources for an answer without markers ------------------------------------------------


def _context(*texts: str) -> ContextWindow:
    chunks = tuple(
        ContextChunk(f"c{i}", retrieved_chunk(i, text), text) for i, text in enumerate(texts, 1)
    )
    return ContextWindow(chunks, 1800, 100, ())


def test_sentences_are_attributed_to_the_passage_they_copy() -> None:
    context = _context(
        "The company VPN uses WireGuard. Install the client and import the profile.",
        COPIED,
        "کارکنان هر سال بیست و شش روز مرخصی استحقاقی دارند.",
    )
    answer = (
        "Every year, employees take twenty-six days of annual leave. "
        "I hope this helps you plan your holidays around the summer. Yes. "
        "کارکنان هر سال بیست و شش روز مرخصی دارند."
    )

    found = answer_attribute(text=answer, context=context)

    assert [a.alias for a in found] == ["c2", "c3"]  # the model's own sentence is no one's
    assert answer[: found[0].position].endswith("leave.")


def test_a_turn_without_markers_stores_attributed_sources(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    composer = ScriptedComposer(pieces=(f"As the handbook says, {COPIED.lower()}",))

    turn, events = turn_events(providers_fake(embedder, composer=composer), QUESTION)

    cited = [e["data"] for e in events if e["type"] == "citation"]
    assert len(cited) == 1 and cited[0]["kind"] == "attributed"
    assert cited[0]["source_file"] == "leave.md"
    stored = Citation.objects.get(turn=turn)
    assert stored.kind == CitationKind.ATTRIBUTED and stored.position is not None


@pytest.mark.llm
def test_a_real_model_without_markers_gets_attributed_not_cited_sources(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    handbook_load(embedder)
    chat = chat_model(llm_server.base_url, llm_server.model)
    composer = OpenAIComposer(chat, timeout_s=120, max_tokens=120)
    providers = replace(providers_fake(embedder), composer=composer)

    turn, events = turn_events(providers, QUESTION)

    kinds = {e["data"].get("kind", "cited") for e in events if e["type"] == "citation"}
    stored = set(Citation.objects.filter(turn=turn).values_list("kind", flat=True))
    assert kinds == stored
    # Token events never carry the markers (the extractor turns them into citations), so the
    # model's own choice shows only in the kinds: a marker it wrote is cited, a sentence it
    # copied without one is attributed, and only an answer without any marker gets the latter.
    rows = list(Citation.objects.filter(turn=turn).values_list("alias", "kind", "position"))
    cited = {alias for alias, kind, _ in rows if kind == CitationKind.CITED}
    attributed = {alias for alias, kind, _ in rows if kind == CitationKind.ATTRIBUTED}
    assert not (cited and attributed)
    assert all(
        position is not None for _, kind, position in rows if kind == CitationKind.ATTRIBUTED
    )


# --- the answer's language ----------------------------------------------------------------


@pytest.mark.llm
def test_the_llm_router_never_decides_the_language(llm_server: LocalLLMServer) -> None:
    chat = chat_model(llm_server.base_url, llm_server.model)
    classifier = LLMClassifier(json_chat_adapter(chat), timeout_s=120)

    result = async_to_sync(classify_safely)(
        classifier=classifier, query=QUESTION, history=(), timeout_s=120
    )

    # The schema no longer asks the model; an English question is an English answer.
    assert result.language == "en"


# --- evaluate_answers ---------------------------------------------------------------------


class BrokenOnLeave(ScriptedComposer):
    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        if "leave" in request.query:
            raise RuntimeError("Event loop is closed")
        yield TextDelta("It says so [c1].")


def _evaluate(folder: Path, tmp_path: Path, providers: object) -> tuple[dict[str, object], str]:
    target, errors = tmp_path / "answers.json", StringIO()
    with providers_override(providers):  # type: ignore[arg-type]
        call_command(
            "evaluate_answers",
            "--dataset",
            str(folder),
            "--json",
            str(target),
            stdout=StringIO(),
            stderr=errors,
        )
    return json.loads(target.read_text()), errors.getvalue()


def test_a_composer_error_is_recorded_and_the_run_goes_on(
    dataset: Path,
    tmp_path: Path,
    embedder: CountingEmbedder,
) -> None:
    result, errors = _evaluate(
        dataset, tmp_path, providers_fake(embedder, composer=BrokenOnLeave())
    )

    assert result["composer_errors"] == 1
    assert result["errors"] == [{"query_id": "q1", "error": "RuntimeError: Event loop is closed"}]
    assert result["answerable"] == 1 and result["unanswerable"] == 1  # the others were scored
    assert "1 of 3 questions failed" in errors


@pytest.mark.llm
def test_a_real_model_cut_short_is_an_error_per_question_not_a_crash(
    dataset: Path,
    tmp_path: Path,
    embedder: CountingEmbedder,
    llm_server: LocalLLMServer,
) -> None:
    chat = chat_model(llm_server.base_url, llm_server.model)
    composer = OpenAIComposer(chat, timeout_s=120, max_tokens=4)
    providers = replace(providers_fake(embedder), composer=composer)

    result, _ = _evaluate(dataset, tmp_path, providers)

    errors = result["errors"]
    assert isinstance(errors, list) and result["composer_errors"] == len(errors) >= 1
    assert all(e["error"].startswith(("answer_truncated", "empty_answer")) for e in errors)
