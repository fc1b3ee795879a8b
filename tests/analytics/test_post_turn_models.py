"""The post-turn step with the real local model (SmolLM2): small talk is neither titled nor
categorised, Persian conversations get Persian titles, and the worker's calls never leave a
connection to be closed on an event loop that has gone ("Event loop is closed")."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest
from asgiref.sync import async_to_sync

from apps.analytics.models import Category, ConversationCategory
from apps.analytics.post_turn import CategoryOption, decide, title_in_language
from apps.analytics.services import post_turn_run
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.providers.chat import ChatMessage, ChatSettings
from apps.answers.providers.openai_chat import OpenAIChatModel
from apps.answers.routing.types import Intent, TurnAction
from apps.corpus.text import detect_language
from tests.conftest import CountingEmbedder
from tests.llm_server import LocalLLMServer, llm_server_fixture  # noqa: F401  (registers it)

pytestmark = [pytest.mark.llm, pytest.mark.django_db]
PERSIAN_QUESTION = "چگونه کلاینت وی‌پی‌ان را روی لینوکس نصب کنم؟"


def _chat(server: LocalLLMServer) -> OpenAIChatModel:
    return OpenAIChatModel(
        ChatSettings(base_url=server.base_url, api_key="", model=server.model, timeout_s=120)
    )


def _turn(conversation: Conversation, index: int, question: str, **columns: object) -> Turn:
    return Turn.objects.create(
        conversation=conversation,
        index=index,
        question=question,
        answer=str(columns.pop("answer", "Install the WireGuard client.")),
        status=TurnStatus.FINISHED,
        **columns,
    )


def test_small_talk_keeps_the_conversations_title_and_categories(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    vpn = Category.objects.create(name="VPN", description="vpn client install wireguard")
    conversation = Conversation.objects.create(title="VPN client on Linux")
    ConversationCategory.objects.create(conversation=conversation, category=vpn, score=0.9)
    thanks = _turn(
        conversation,
        2,
        "Thanks, that helped!",
        answer="You're welcome!",
        intent=Intent.CONVERSATIONAL,
        action=TurnAction.CHAT,
    )
    greeting = _turn(
        Conversation.objects.create(), 1, "Hello!", answer="Hello!", action=TurnAction.CLARIFY
    )

    for turn in (thanks, greeting):
        assert post_turn_run(turn_id=turn.pk, embedder=embedder, chat=_chat(llm_server)) is None

    conversation.refresh_from_db()
    greeting.conversation.refresh_from_db()
    assert conversation.title == "VPN client on Linux" and greeting.conversation.title == ""
    assert list(ConversationCategory.objects.values_list("conversation_id", "category_id")) == [
        (conversation.pk, vpn.pk)
    ]


def test_a_persian_conversation_gets_a_persian_title(llm_server: LocalLLMServer) -> None:
    turn = _turn(Conversation.objects.create(), 1, PERSIAN_QUESTION, answer="کلاینت را نصب کنید.")
    options = [CategoryOption(1, "IT support", "computers, VPN, accounts")]

    # The model's title when it answers in time, the offline one otherwise: Persian either way.
    decision = decide(
        turn=turn,
        options=options,
        aliases=[],
        cited=False,
        embedder=CountingEmbedder(),
        chat=_chat(llm_server),
    )

    assert decision.title is not None and detect_language(decision.title) == "fa"


def test_a_title_in_another_language_is_taken_from_the_question() -> None:
    assert title_in_language("VPN installation", question=PERSIAN_QUESTION) == (
        "چگونگی نصب کلاینت وی‌پی‌ان روی لینوکس"
    )
    assert title_in_language("نصب وی‌پی‌ان", question=PERSIAN_QUESTION) == "نصب وی‌پی‌ان"
    assert title_in_language("VPN installation", question="How do I install it?") == (
        "VPN installation"
    )


def _loop_errors(caplog: pytest.LogCaptureFixture) -> bool:
    # asyncio logs the failed close as "Task exception was never retrieved", with the error.
    return "Event loop is closed" in caplog.text


def test_worker_tasks_in_a_row_leave_no_connection_to_a_dead_loop(
    llm_server: LocalLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Each post-turn task builds its chat model and calls it through `async_to_sync`, a new
    event loop every time. Before, the SDK's client of a finished task, collected during a
    later task, closed its connection there: `RuntimeError('Event loop is closed')`."""
    caplog.set_level(logging.ERROR, logger="asyncio")

    async def one_call(chat: OpenAIChatModel) -> str:
        await collect_garbage()  # the interpreter may do this at any point of a later task
        return await chat.complete_json(
            messages=[ChatMessage("user", 'Reply with {"ok": true}')],
            schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
            schema_name="ok",
            max_tokens=8,
        )

    replies = [async_to_sync(one_call)(_chat(llm_server)) for _ in range(3)]
    async_to_sync(collect_garbage)()

    assert all(replies)
    assert "Event loop is closed" not in caplog.text  # asyncio logs it with the failed close


def test_the_post_turn_call_closes_what_it_opened(llm_server: LocalLLMServer) -> None:
    chat = _chat(llm_server)
    turn = _turn(Conversation.objects.create(), 1, "How do I install the VPN client?")
    options = [CategoryOption(1, "IT support", "computers, VPN, accounts")]

    decide(
        turn=turn, options=options, aliases=[], cited=False, embedder=CountingEmbedder(), chat=chat
    )

    assert not chat._clients  # the loop's client was closed before its loop ended


async def collect_garbage() -> None:
    gc.collect()
    await asyncio.sleep(0.05)


# --- issue 24: a refusal has no sources; the step's own time limit ----------------------


def _refused_turn_with_context() -> Turn:
    """A refusal whose context held two passages of a real document."""
    from apps.corpus.ingestion.services import (
        collection_get_or_create,
        document_process,
        document_submit,
    )

    text = b"# VPN\n\nInstall the VPN client.\n\n# Leave\n\nEmployees take leave."
    result = document_submit(
        collection=collection_get_or_create(name="IT"), filename="it.md", data=text
    )
    document_process(document_id=result.document.pk)
    chunk_id = result.document.chunks.values_list("pk", flat=True).first()
    return _turn(
        Conversation.objects.create(),
        1,
        "What is the parking garage's opening time?",
        answer="The documents do not say when the parking garage opens.",
        refused=True,
        intent=Intent.FACTUAL_QUESTION,
        context={"aliases": {"c1": chunk_id, "c2": chunk_id}},
    )


def test_a_refused_turn_gets_no_attributed_sources_from_the_model(
    llm_server: LocalLLMServer, embedder: CountingEmbedder
) -> None:
    turn = _refused_turn_with_context()

    decision = post_turn_run(turn_id=turn.pk, embedder=embedder, chat=_chat(llm_server))

    # Before: the step attributed the refusal's context passages to it as its sources.
    assert decision is not None and decision.attributed_aliases == ()
    assert not turn.citations.exists()


def test_a_refused_turn_gets_no_attributed_sources_offline(embedder: CountingEmbedder) -> None:
    turn = _refused_turn_with_context()

    decision = post_turn_run(turn_id=turn.pk, embedder=embedder, chat=None)

    assert decision is not None and decision.attributed_aliases == ()
    assert not turn.citations.exists()


def test_the_post_turn_call_keeps_to_its_own_time_limit(
    embedder: CountingEmbedder, settings: object
) -> None:
    import time

    from tests.answers.chat_server import threaded_server

    async def never_answers(body: bytes, reader: asyncio.StreamReader, writer: object) -> None:
        await reader.read()  # until the client gives up

    settings.RAG_POST_TURN_TIMEOUT_S = 0.5  # type: ignore[attr-defined]
    turn = _turn(Conversation.objects.create(), 1, "How do I install the VPN client?")
    with threaded_server(never_answers) as url:
        chat = OpenAIChatModel(ChatSettings(base_url=url, api_key="", model="m", timeout_s=20))
        started = time.monotonic()
        decision = post_turn_run(turn_id=turn.pk, embedder=embedder, chat=chat)

    # Before: it waited for the chat model's own limit (20 s here), then retried.
    assert time.monotonic() - started < 5
    assert decision is not None and decision.classifier.startswith("offline/")
