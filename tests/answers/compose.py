"""Compose requests over small context windows, and what a composer's events say, for the
composer tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apps.answers.composing import ComposeRequest, ComposerEvent, ExtractiveComposer, TextDelta
from apps.answers.retrieval.types import ContextChunk, ContextWindow
from apps.answers.routing.types import Intent
from apps.answers.streaming import CitationExtractor, CitationMark, TextPiece
from apps.corpus.search.embedders import Embedder
from apps.corpus.text import Language
from tests.answers.fakes import retrieved_chunk
from tests.conftest import CountingEmbedder

LEAVE = (
    "Leave policy",
    "Employees receive 25 days of annual leave per calendar year. Annual leave must be "
    "requested two weeks in advance. Unused annual leave of up to five days can be carried "
    "over to the next year.",
)


EXPENSES = (
    "Travel expenses",
    "Travel must be booked through the travel desk. Expense claims must be submitted within "
    "30 days of the trip. Receipts are required for every claim above 20 euros.",
)


def window(*documents: tuple[str, str]) -> ContextWindow:
    chunks = []
    for index, (title, text) in enumerate(documents, start=1):
        retrieved = retrieved_chunk(index, text, title=title)
        chunks.append(ContextChunk(alias=f"c{index}", chunk=retrieved, text=text))
    return ContextWindow(tuple(chunks), budget_tokens=2000, used_tokens=200, dropped_chunk_ids=())


def ask(
    query: str,
    context: ContextWindow,
    *,
    intent: str = "factual_question",
    language: str = "en",
    hybrid: bool = False,
) -> ComposeRequest:
    return ComposeRequest(
        query=query,
        intent=Intent(intent),
        language=Language(language),
        context=context,
        hybrid=hybrid,
    )


async def run(composer: ExtractiveComposer, request: ComposeRequest) -> list[ComposerEvent]:
    return [event async for event in composer.compose(request)]


def text_of(events: Sequence[ComposerEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def composer(embedder: Embedder | None = None, **options: Any) -> ExtractiveComposer:
    # The default threshold is calibrated on the real model's cosines; the hashed
    # bag-of-words fake gives lower ones for the same match, so these tests set their own.
    options.setdefault("min_evidence", 0.3)
    return ExtractiveComposer(embedder or CountingEmbedder(), **options)


def cited(events: Sequence[ComposerEvent]) -> tuple[str, list[CitationMark]]:
    """Run the pieces through the streaming extractor exactly as the turn pipeline does."""
    extractor = CitationExtractor()
    items = []
    for event in events:
        if isinstance(event, TextDelta):
            items += extractor.feed(event.text)
    items += extractor.close()
    text = "".join(i.text for i in items if isinstance(i, TextPiece))
    return text, [i for i in items if isinstance(i, CitationMark)]
