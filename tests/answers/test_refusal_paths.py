"""Every way an answer can be refused ends the same: a red confidence, a stored reason, the
closest documents named, and the reason on the audit page."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from django.urls import reverse

from apps.answers.composing import ExtractiveComposer, OpenAIComposer
from apps.answers.composing.confidence import YELLOW_FROM
from apps.answers.composing.types import (
    Composer,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    TextDelta,
)
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.providers.registry import Providers
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import turn_start
from ragplatform.errors import FailureCode
from tests.answers.fakes import ScriptedChat, SureRefuser, handbook_load, providers_fake
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


class UnavailableComposer:
    name = "down"

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        raise ComposerError(FailureCode.MODEL_UNAVAILABLE, "connection refused", retryable=True)
        yield TextDelta("")  # pragma: no cover - makes this an async generator


def _answer(embedder: CountingEmbedder, composer: Composer, question: str, **extra: object) -> Turn:
    providers = Providers(**{**providers_fake(embedder).__dict__, "composer": composer, **extra})
    turn = turn_start(conversation=Conversation.objects.create(), question=question)

    async def collect() -> None:
        async for _ in turn_run(turn_id=turn.pk, providers=providers):
            pass

    async_to_sync(collect)()
    turn.refresh_from_db()
    return turn


def _extractive(embedder: CountingEmbedder, min_evidence: float) -> ExtractiveComposer:
    return ExtractiveComposer(embedder, min_evidence=min_evidence)


def _chat_refusal() -> OpenAIComposer:
    # The model refuses yet claims to be sure: its own confidence must not colour the badge.
    chat = ScriptedChat(["The documents do not contain this.\n", "CONFIDENCE: 0.95"])
    return OpenAIComposer(chat, timeout_s=5)


LEAVE_QUESTION = "How many days of annual leave?"
# path -> (question, the start of the stored reason)
PATHS = {
    "evidence below the threshold": (LEAVE_QUESTION, "evidence 0."),
    "a number asked, none stated": (
        "How many people use the company VPN WireGuard client?",
        "asks for a number, none stated",
    ),
    "the chat model's own refusal": (LEAVE_QUESTION, "the model said the sources do not answer"),
    "the fallback composer's refusal": (LEAVE_QUESTION, "evidence 0."),
    "any composer, however sure": (LEAVE_QUESTION, "scripted refusal"),
}


def _composers(path: str, embedder: CountingEmbedder) -> tuple[Composer, Composer | None]:
    """The composer and the fallback of one refusal path."""
    if path == "evidence below the threshold":
        return _extractive(embedder, 1.0), None
    if path == "a number asked, none stated":
        return _extractive(embedder, 0.0), None
    if path == "the chat model's own refusal":
        return _chat_refusal(), None
    if path == "the fallback composer's refusal":
        return UnavailableComposer(), _extractive(embedder, 1.0)
    return SureRefuser(), None


@pytest.mark.parametrize("path", list(PATHS))
def test_every_refusal_is_red_with_a_stored_reason_and_the_closest_documents(
    embedder: CountingEmbedder, path: str
) -> None:
    handbook_load(embedder)
    question, reason = PATHS[path]
    composer, fallback = _composers(path, embedder)

    turn = _answer(embedder, composer, question, fallback_composer=fallback)

    assert turn.status == TurnStatus.FINISHED
    assert turn.refused
    assert turn.confidence is not None and turn.confidence < YELLOW_FROM
    assert turn.confidence_band == "red"
    assert turn.refusal_reason.startswith(reason)
    if path != "any composer, however sure":
        assert "closest documents" in turn.answer.lower()


def test_an_answer_stores_no_refusal_reason(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)

    turn = _answer(embedder, _extractive(embedder, 0.0), "Which VPN does the company use?")

    assert not turn.refused and turn.refusal_reason == ""


def test_the_audit_page_shows_why_a_turn_was_refused(
    embedder: CountingEmbedder, admin_client: Client
) -> None:
    handbook_load(embedder)
    turn = _answer(embedder, _extractive(embedder, 1.0), "How many days of annual leave?")

    page = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk]))

    assert page.status_code == 200
    assert f"refused: {turn.refusal_reason}" in page.content.decode()
