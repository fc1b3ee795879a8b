"""ConversationalResponder: fixed replies offline, a model reply when one is configured.

The model path shares `stream_pieces` with OpenAIComposer, whose tests run it against the
real local server; here scripted models cover the shapes that matter.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from apps.answers.composing import (
    EMPTY_ANSWER,
    MODEL_INTERRUPTED,
    MODEL_UNAVAILABLE,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    ConversationalResponder,
    TextDelta,
)
from apps.answers.composing.conversational import message_kind
from apps.answers.providers.chat import ChatUnavailable
from apps.answers.retrieval.types import ContextWindow
from apps.answers.routing.types import Intent
from apps.answers.turn.compose_stream import ComposeOutcome, compose_events
from apps.answers.turn.recorder import MemoryRecorder
from apps.corpus.text import Language
from tests.answers.fakes import ScriptedChat

NO_CONTEXT = ContextWindow(chunks=(), budget_tokens=1, used_tokens=0, dropped_chunk_ids=())


def say(query: str, language: str = "en") -> ComposeRequest:
    return ComposeRequest(
        query=query,
        intent=Intent.CONVERSATIONAL,
        language=Language(language),
        context=NO_CONTEXT,
    )


async def run(responder: ConversationalResponder, request: ComposeRequest) -> list[ComposerEvent]:
    return [event async for event in responder.compose(request)]


def text_of(events: Sequence[ComposerEvent]) -> str:
    assert all(isinstance(e, TextDelta) for e in events)  # no support signal, no refusal
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("Hello there!", "greeting"),
        ("سلام، وقت بخیر", "greeting"),
        ("Thanks a lot, that helped", "thanks"),
        ("خیلی ممنون", "thanks"),
        ("ok bye", "farewell"),
        ("What can you do?", "about"),
        ("Which hello world examples exist?", "about"),
    ],
)
def test_message_kinds(query: str, kind: str) -> None:
    assert message_kind(query) == kind


async def test_offline_greeting_responds_in_kind_and_says_what_the_platform_does() -> None:
    events = await run(ConversationalResponder(), say("Hi!"))

    text = text_of(events)
    assert len(events) >= 2
    assert text.startswith("Hello!")
    assert "documents" in text and "cite" in text and "compare" in text
    assert "[" not in text


async def test_offline_thanks_in_persian() -> None:
    text = text_of(await run(ConversationalResponder(), say("مرسی", language="fa")))

    assert text.startswith("خواهش می‌کنم")


async def test_model_failure_before_any_text_hands_over_and_the_fallback_is_recorded() -> None:
    responder = ConversationalResponder(ScriptedChat(error=ChatUnavailable("down")))

    with pytest.raises(ComposerError) as caught:
        await run(responder, say("What can you do?"))
    outcome = ComposeOutcome()
    async for _ in compose_events(
        composer=responder,
        fallback=ConversationalResponder(),
        request=say("What can you do?"),
        recorder=MemoryRecorder(),
        outcome=outcome,
    ):
        pass

    assert caught.value.code == MODEL_UNAVAILABLE
    assert outcome.text.startswith("I answer questions from your organisation's documents")
    # Recorded as the fallback it was, not under the model's name.
    assert outcome.composer == "conversational/offline"
    assert outcome.fallback_reason == "conversational/scripted: model_unavailable"


async def test_model_reply_streams_and_a_blank_one_counts_as_none() -> None:
    streamed = await run(ConversationalResponder(ScriptedChat(["\n", "Hi", " there!"])), say("Hi"))

    assert text_of(streamed) == "Hi there!"
    with pytest.raises(ComposerError) as caught:
        await run(ConversationalResponder(ScriptedChat(["\n", "  "])), say("Hi"))
    assert caught.value.code == EMPTY_ANSWER


async def test_model_failure_after_text_is_interrupted() -> None:
    chat = ScriptedChat(["Hello", " and"], error=ChatUnavailable("dropped"))

    with pytest.raises(ComposerError) as caught:
        await run(ConversationalResponder(chat), say("Hi"))

    assert caught.value.code == MODEL_INTERRUPTED
