"""OpenAIComposer against the real local model server, plus scripted chat models for the
stream shapes a real model will not produce on demand (garbage, empty, cut mid-marker)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from apps.answers.composing import (
    ANSWER_TRUNCATED,
    EMPTY_ANSWER,
    MODEL_INTERRUPTED,
    MODEL_TIMEOUT,
    MODEL_UNAVAILABLE,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    OpenAIComposer,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.composing.prompts import answer_messages
from apps.answers.providers.chat import (
    ChatError,
    ChatSettings,
    ChatTimeout,
    ChatUnavailable,
)
from apps.answers.providers.openai_chat import OpenAIChatModel
from apps.answers.retrieval.types import ContextChunk, ContextWindow
from apps.answers.routing.types import HistoryMessage
from apps.answers.streaming import extract_citations
from tests.answers.fakes import ScriptedChat, retrieved_chunk
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers the fixture)


def context_chunk(index: int, title: str, text: str, heading: str = "") -> ContextChunk:
    retrieved = retrieved_chunk(index, text, title=title, heading=heading, page=index + 2)
    return ContextChunk(alias=f"c{index}", chunk=retrieved, text=text)


CONTEXT = ContextWindow(
    chunks=(
        context_chunk(
            1,
            "Leave policy",
            "Employees receive 25 days of annual leave per year.",
            "Annual leave",
        ),
        context_chunk(2, "Expenses", "Claims are paid within 30 days."),
    ),
    budget_tokens=1000,
    used_tokens=20,
    dropped_chunk_ids=(),
)


def ask(query: str = "How many days of annual leave do I get?", **overrides: Any) -> ComposeRequest:
    values: dict[str, Any] = {
        "query": query,
        "intent": "factual_question",
        "language": "en",
        "context": CONTEXT,
    }
    values.update(overrides)
    return ComposeRequest(**values)


async def run(composer: OpenAIComposer, request: ComposeRequest) -> list[ComposerEvent]:
    return [event async for event in composer.compose(request)]


def text_of(events: Sequence[ComposerEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def scripted(*pieces: str, error: ChatError | None = None) -> OpenAIComposer:
    return OpenAIComposer(ScriptedChat(pieces, error=error), timeout_s=5)


# --- the real server -------------------------------------------------------------------


@pytest.fixture
async def real_chat(llm_server: LocalLLMServer) -> AsyncIterator[OpenAIChatModel]:
    settings = ChatSettings(
        base_url=llm_server.base_url, api_key="", model=llm_server.model, timeout_s=120
    )
    model = OpenAIChatModel(settings)
    yield model
    await model.aclose()


@pytest.mark.llm
async def test_real_model_streams_text_then_a_support_signal(real_chat: OpenAIChatModel) -> None:
    composer = OpenAIComposer(real_chat, timeout_s=120, max_tokens=16)

    events: list[ComposerEvent] = []
    try:
        async for event in composer.compose(ask()):
            events.append(event)
    except ComposerError as exc:
        # 16 tokens rarely hold a whole answer: the text streamed, then the cut is reported.
        assert exc.code == ANSWER_TRUNCATED
        assert len(events) >= 3 and all(isinstance(e, TextDelta) for e in events)
        return

    deltas = [e for e in events if isinstance(e, TextDelta)]
    signals = [e for e in events if isinstance(e, SupportSignal)]
    assert len(deltas) >= 3
    assert text_of(events).strip()
    assert len(signals) == 1
    assert 0.0 <= signals[0].value <= 1.0
    assert signals[0].source in {"self-reported", "marker-coverage"}
    # The signal closes the text: nothing streams after it except a possible refusal.
    assert all(not isinstance(e, TextDelta) for e in events[events.index(signals[0]) :])
    assert composer.name == f"openai/{real_chat.name}"


@pytest.mark.llm
async def test_real_model_over_a_tiny_time_limit_is_a_retryable_timeout(
    real_chat: OpenAIChatModel,
) -> None:
    # A deadline shorter than any first token: the timeout must come before any text.
    composer = OpenAIComposer(real_chat, timeout_s=0.001, max_tokens=16)

    with pytest.raises(ComposerError) as caught:
        await run(composer, ask())

    assert caught.value.code == MODEL_TIMEOUT
    assert caught.value.retryable


# --- scripted streams --------------------------------------------------------------------


async def test_a_stream_cut_inside_a_marker_is_interrupted_and_hides_the_fragment() -> None:
    shown: list[str] = []
    with pytest.raises(ComposerError) as caught:
        async for event in scripted("Leave is 25 days", " a year [c").compose(ask()):
            assert isinstance(event, TextDelta)
            shown.append(event.text)

    assert caught.value.code == MODEL_INTERRUPTED
    assert "".join(shown) == "Leave is 25 days a year"


@pytest.mark.parametrize(
    "pieces", [(), ("", "  ", "\n"), ("\n", "CONFIDENCE: 0.9")], ids=["none", "blank", "only-conf"]
)
async def test_an_empty_answer_is_an_error(pieces: tuple[str, ...]) -> None:
    with pytest.raises(ComposerError) as caught:
        await run(scripted(*pieces), ask())

    assert caught.value.code == EMPTY_ANSWER
    assert not caught.value.retryable


@pytest.mark.parametrize(
    ("error", "code", "retryable"),
    [
        (ChatUnavailable("connection refused"), MODEL_UNAVAILABLE, True),
        (ChatTimeout("no first token"), MODEL_TIMEOUT, True),
        (ChatError("garbage from the server"), MODEL_UNAVAILABLE, False),
    ],
)
async def test_failures_before_any_text_map_to_fallback_codes(
    error: ChatError, code: str, retryable: bool
) -> None:
    with pytest.raises(ComposerError) as caught:
        await run(scripted(error=error), ask())

    assert caught.value.code == code
    assert caught.value.retryable is retryable


async def test_a_failure_after_text_is_interrupted_and_keeps_what_was_shown() -> None:
    shown: list[str] = []
    composer = scripted("Leave is 25 days [c1].", " Also", error=ChatUnavailable("dropped"))

    with pytest.raises(ComposerError) as caught:
        async for event in composer.compose(ask()):
            assert isinstance(event, TextDelta)
            shown.append(event.text)

    assert caught.value.code == MODEL_INTERRUPTED
    assert "".join(shown).startswith("Leave is 25 days [c1].")


ANSWER = "Leave is 25 days a year [c1].\nClaims are paid in 30 days [c2].\nCONFIDENCE: 0.85"


@pytest.mark.parametrize("cut", range(1, len(ANSWER)))
async def test_the_confidence_line_never_streams_however_the_text_is_split(cut: int) -> None:
    events = await run(scripted(ANSWER[:cut], ANSWER[cut:]), ask())

    assert text_of(events) == ANSWER.rsplit("\n", 1)[0]
    support = events[-1]
    assert isinstance(support, SupportSignal)
    assert (support.value, support.source) == (0.85, "self-reported")


async def test_a_sentence_that_starts_like_the_label_still_streams() -> None:
    events = await run(scripted("Confidence", " intervals were wide [c1]."), ask())

    assert text_of(events) == "Confidence intervals were wide [c1]."
    assert isinstance(events[-1], SupportSignal)
    assert events[-1].source == "marker-coverage"


async def test_without_a_confidence_line_support_is_the_share_of_cited_sentences() -> None:
    # One sentence cites a real passage, one cites nothing, one cites an invented alias.
    events = await run(
        scripted("Leave is 25 days [c1]. It is generous. Pay is weekly [c9]."), ask()
    )

    signal = events[-1]
    assert isinstance(signal, SupportSignal)
    assert signal.source == "marker-coverage"
    assert signal.value == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("answer", "language", "refused"),
    [
        ("The documents do not contain the notice period.", "en", True),
        ("این اطلاعات در اسناد موجود نیست.", "fa", True),
        ("Leave is 25 days [c1]. The documents do not say how to carry it over.", "en", False),
        ("Leave is 25 days a year [c1].", "en", False),
    ],
)
async def test_a_refusal_in_the_answer_is_reported(
    answer: str, language: str, refused: bool
) -> None:
    events = await run(scripted(answer), ask(language=language))

    assert any(isinstance(e, Refusal) for e in events) is refused
    text = text_of(events)
    assert text.startswith(answer)
    # A refusal names the closest documents after the model's words, as the offline one does.
    assert (text != answer) is refused
    if refused:
        assert "Leave policy" in text[len(answer) :] and "Expenses" in text[len(answer) :]


def test_the_prompt_numbers_the_sources_and_carries_the_conversation() -> None:
    history = (
        HistoryMessage(role="user", text="Hi"),
        HistoryMessage(role="assistant", text="Hello!"),
    )
    messages = answer_messages(ask(language="fa", history=history, hybrid=True))

    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert "Persian" in messages[0].content
    assert "CONFIDENCE" in messages[0].content
    sources = messages[-1].content
    assert "[c1] Leave policy — Annual leave (p. 3)\nEmployees receive 25 days" in sources
    assert "[c2] Expenses (p. 4)\nClaims are paid" in sources
    assert "2-3 sentence summary" in sources
    assert sources.rstrip().endswith("separately.")


async def test_streamed_markers_resolve_to_context_aliases() -> None:
    events = await run(scripted("Leave is 25 days [c1].", " Claims take 30 days [c2]."), ask())

    text, marks = extract_citations(text_of(events))
    assert [m.alias for m in marks] == ["c1", "c2"]
    assert "[" not in text


def test_configuration_is_checked_at_construction() -> None:
    make: Callable[..., OpenAIComposer] = OpenAIComposer
    with pytest.raises(ValueError, match="timeout_s"):
        make(ScriptedChat(), timeout_s=0)
    with pytest.raises(ValueError, match="max_tokens"):
        make(ScriptedChat(), timeout_s=1, max_tokens=0)
