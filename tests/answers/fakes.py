"""Small fake stages for whole-turn tests: a fixed classifier, scripted composers and a
scripted chat model, put together with a real Retriever over the CountingEmbedder and a tiny
ingested handbook."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync

from apps.answers.composing.types import (
    ComposeRequest,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.events import Envelope
from apps.answers.models import Conversation, Turn
from apps.answers.providers.chat import ChatError, ChatMessage, ChatUsage
from apps.answers.providers.registry import Providers
from apps.answers.retrieval.pipeline import Retriever
from apps.answers.retrieval.types import Candidate, RetrievedChunk
from apps.answers.routing.types import Classification, HistoryMessage, Intent, Strategy, Tier
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import turn_start
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.models import Collection
from apps.corpus.text import Language
from tests.conftest import CountingEmbedder

HANDBOOK = {
    "leave.md": "# Leave\n\nEmployees take twenty-six days of annual leave every year.",
    "vpn.md": "# VPN\n\nThe company VPN uses WireGuard. Install the client and import the profile.",
    "expenses.md": "# Expenses\n\nTravel expenses are refunded within ten working days.",
}


def retrieved_chunk(
    index: int,
    text: str,
    *,
    title: str = "",
    heading: str = "",
    page: int | None = None,
    filename: str = "",
    token_count: int | None = None,
    candidate: Candidate | None = None,
) -> RetrievedChunk:
    """A retrieved chunk as the pipeline hands it on; the index is its id and rank (score 1/i)."""
    return RetrievedChunk(
        chunk_id=index,
        document_id=index,
        title=title or f"Doc {index}",
        filename=filename or f"{index}.md",
        heading=heading,
        page=page,
        text=text,
        token_count=len(text.split()) if token_count is None else token_count,
        language="en",
        score=1.0 / index,
        candidate=candidate or Candidate(index),
    )


# What the scripted composer says: markers as a model writes them, split mid-marker on purpose.
ANSWER_PIECES = (
    "Employees take twenty-six days of annual leave a year [c",
    "1]. Leave requests go to your manager. ",
    "Unused days do not carry over to the next year [c1].",
)
ANSWER_TEXT = (
    "Employees take twenty-six days of annual leave a year. Leave requests go to your "
    "manager. Unused days do not carry over to the next year."
)


def handbook_load(
    embedder: CountingEmbedder,
    name: str = "Handbook",
    *,
    public: bool = True,
    documents: Mapping[str, str] = HANDBOOK,
) -> Collection:
    """The handbook (or `documents`), ingested; public unless the test is about who may read it."""
    collection = collection_get_or_create(name=name, public=public)
    for filename, text in documents.items():
        result = document_submit(collection=collection, filename=filename, data=text.encode())
        document_process(document_id=result.document.pk, embedder=embedder)
    return collection


def classification(
    intent: Intent = Intent.FACTUAL_QUESTION, *, confidence: float = 0.9, language: str = "en"
) -> Classification:
    return Classification(
        intent=intent,
        confidence=confidence,
        tier=Tier.T1,
        strategy=Strategy.SIMPLE,
        decomposed_steps=(),
        language=Language(language),
        reasoning="fixed by the test",
        classifier="trained",
    )


@dataclass
class FixedClassifier:
    """Always `result`, unless a key of `when` occurs in the question."""

    result: Classification = field(default_factory=classification)
    when: Mapping[str, Classification] = field(default_factory=dict)
    name: str = "fixed"

    async def classify(self, *, query: str, history: Sequence[HistoryMessage]) -> Classification:
        return next((c for word, c in self.when.items() if word in query), self.result)


@dataclass
class ScriptedComposer:
    """Streams fixed pieces (with [cN] markers), then a support signal.

    `delay_s` stands in for a slow model, so that a test can cancel or drop the socket
    mid-answer; `delay_for` picks the delay from the question instead. With `hold`, the
    composer stops after its first piece until the test sets the event. `pieces_for` may
    script the answer per question (None keeps `pieces`).
    """

    pieces: Sequence[str] = ANSWER_PIECES
    delay_s: float = 0.0
    support: float = 0.8
    delay_for: Callable[[str], float] | None = None
    pieces_for: Callable[[str], Sequence[str] | None] | None = None
    hold: asyncio.Event | None = None
    name: str = "scripted"
    started: int = 0

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        self.started += 1
        delay = self.delay_for(request.query) if self.delay_for else self.delay_s
        pieces = (self.pieces_for(request.query) if self.pieces_for else None) or self.pieces
        for i, piece in enumerate(pieces):
            if delay:
                await asyncio.sleep(delay)
            if i == 1 and self.hold is not None:
                await self.hold.wait()
            yield TextDelta(piece)
        yield SupportSignal(self.support, "test")


def providers_fake(
    embedder: CountingEmbedder,
    *,
    composer: ScriptedComposer | None = None,
    classifier: FixedClassifier | None = None,
) -> Providers:
    return Providers(
        embedder=embedder,
        classifier=classifier or FixedClassifier(),
        retriever=Retriever(embedder=embedder),
        composer=composer or ScriptedComposer(),
        fallback_composer=None,
        responder=ScriptedComposer(pieces=("Hello! Ask me about your documents.",)),
        chat=None,
        router_timeout_s=2.0,
        rewrite_timeout_s=2.0,
        context_budget_tokens=1800,
        bump_threshold=0.7,
        clarify_threshold=0.55,
    )


class ScriptedChat:
    """A ChatModel that streams given pieces, then optionally fails."""

    name = "scripted"

    def __init__(
        self,
        pieces: Sequence[str] = (),
        *,
        error: ChatError | None = None,
        json_reply: str = "",
    ) -> None:
        self.pieces = list(pieces)
        self.error = error
        self.json_reply = json_reply
        self.messages: list[ChatMessage] = []

    async def stream(
        self,
        *,
        messages: Sequence[ChatMessage],
        temperature: float = 0.2,
        max_tokens: int | None = None,
    ) -> AsyncIterator[str]:
        self.messages = list(messages)
        for piece in self.pieces:
            yield piece
        if self.error is not None:
            raise self.error

    async def complete_json(
        self,
        *,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> str:
        self.messages = list(messages)
        if self.error is not None:
            raise self.error
        return self.json_reply

    @property
    def last_usage(self) -> ChatUsage | None:
        return None


class SureRefuser:
    """A composer that refuses yet reports full support: the turn must still show red."""

    name = "sure-refuser"

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        yield TextDelta("The documents do not say.")
        yield SupportSignal(1.0, "test")
        yield Refusal(reason="scripted refusal")


def turn_collected(
    providers: Providers, question: str, conversation: Conversation | None = None
) -> tuple[Turn, list[Envelope]]:
    """A turn started and run to its end through the real turn path; its stored row and events."""
    turn = turn_start(conversation=conversation or Conversation.objects.create(), question=question)

    async def collect() -> list[Envelope]:
        return [e async for e in turn_run(turn_id=turn.pk, providers=providers)]

    events = async_to_sync(collect)()
    turn.refresh_from_db()
    return turn, events


def event_types(events: list[Envelope]) -> list[str]:
    return [e["type"] for e in events]
