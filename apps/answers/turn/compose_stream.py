"""Composer output -> user-facing events: markers stripped, citations validated, text coalesced."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from apps.answers.composing.attribution import answer_attribute
from apps.answers.composing.confidence import (
    UNSUPPORTED_SHARE,
    confidence_blend,
    refusal_confidence,
    retrieval_features,
    retrieval_quality,
)
from apps.answers.composing.terms import content_terms
from apps.answers.composing.types import (
    Composer,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.events import Envelope, EventType, ProgressStage
from apps.answers.models import CitationKind
from apps.answers.retrieval.types import ContextChunk, RetrievedChunk
from apps.answers.streaming import (
    CitationExtractor,
    CitationMark,
    Coalescer,
    TextPiece,
    uncited_share,
)
from apps.answers.turn.pacing import NothingYet, composer_paced
from apps.answers.turn.recorder import EventRecorder, PendingEvent
from apps.answers.turn.services import CitationRecord
from apps.corpus.text import fence_marks_removed, table_rules_removed

logger = logging.getLogger(__name__)


@dataclass
class ComposeOutcome:
    composer: str = ""
    support: float | None = None
    support_source: str = ""  # how the composer obtained it (SupportSignal.source)
    support_signals: tuple[tuple[str, float], ...] = ()  # SupportSignal.signals
    refused: bool = False
    refusal_reason: str = ""
    text: str = ""
    citations: list[CitationRecord] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    marks: list[CitationMark] = field(default_factory=list)
    error: ComposerError | None = None
    fallback_reason: str = ""


def answer_confidence(*, outcome: ComposeOutcome, chunks: Sequence[RetrievedChunk]) -> float:
    """The blended confidence of an answer: the composer's support and the retrieval's quality;
    a refusal's stays in the red band, whichever composer refused and why, and so does an
    answer that says next to nothing (markers, table rules, stop-words), whatever the
    composer claimed for it."""
    support = outcome.support if outcome.support is not None else 0.0
    value = confidence_blend(
        support=support, retrieval=retrieval_quality(chunks), signals=badge_signals(outcome)
    )
    says_little = len(content_terms(outcome.text)) < settings.RAG_ANSWER_MIN_CONTENT_WORDS
    return refusal_confidence(value) if outcome.refused or says_little else value


def badge_signals(outcome: ComposeOutcome) -> dict[str, float]:
    """The composer's signals, and the share of the answer's sentences without a citation."""
    uncited = uncited_share(text=outcome.text, marks=outcome.marks)
    return {**dict(outcome.support_signals), UNSUPPORTED_SHARE: uncited}


def confidence_inputs(
    *, outcome: ComposeOutcome, chunks: Sequence[RetrievedChunk]
) -> dict[str, Any]:
    """What `answer_confidence` reads, stored with the turn: the audit shows why a badge is
    what it is, and an evaluation refits the blend from real turns (evaluate_documents
    --signals) exactly as evaluate_answers --signals does from the pipeline."""
    features = retrieval_features(chunks)
    return {
        "support": outcome.support,
        "support_source": outcome.support_source,
        "signals": badge_signals(outcome),
        "cosine": features.cosine if features else None,
        "agreed": features.agreed if features else False,
    }


async def compose_events(
    *,
    composer: Composer,
    fallback: Composer | None,
    request: ComposeRequest,
    recorder: EventRecorder,
    outcome: ComposeOutcome,
) -> AsyncIterator[Envelope]:
    """Stream one composer; before its first text, a failure hands over to the fallback. First
    a `progress` event: the search is over and the answer is being written."""
    yield await recorder.emit(EventType.PROGRESS, {"stage": ProgressStage.WRITING})
    sink = _Sink(recorder, request.context.by_alias(), outcome)
    try:
        outcome.composer = composer.name
        async for envelope in sink.run(composer, request):
            yield envelope
    except ComposerError as exc:
        if sink.started or fallback is None:
            outcome.error = exc
        else:
            logger.warning("Composer %s failed before text (%s); falling back", composer.name, exc)
            outcome.fallback_reason = f"{composer.name}: {exc.code}"
            outcome.composer = fallback.name
            async for envelope in sink.run(fallback, request):
                yield envelope
    async for envelope in sink.close():
        yield envelope


async def attributed_events(
    *, request: ComposeRequest, recorder: EventRecorder, outcome: ComposeOutcome
) -> AsyncIterator[Envelope]:
    """An answer without a single [cN] marker gets the passages its sentences copy, as
    attributed sources (a `citation` event with kind "attributed"), never as cited ones."""
    if outcome.marks or outcome.refused or not outcome.text.strip():
        return
    aliases = request.context.by_alias()
    seen: set[str] = set()
    for found in answer_attribute(text=outcome.text, context=request.context):
        if found.alias in seen:
            continue
        seen.add(found.alias)
        record = citation_record(
            aliases[found.alias], position=found.position, kind=CitationKind.ATTRIBUTED
        )
        outcome.citations.append(record)
        yield await recorder.emit(
            EventType.CITATION, {**citation_data(record), "kind": str(CitationKind.ATTRIBUTED)}
        )


class _Sink:
    def __init__(
        self, recorder: EventRecorder, aliases: dict[str, ContextChunk], outcome: ComposeOutcome
    ) -> None:
        self.recorder, self.aliases, self.outcome = recorder, aliases, outcome
        self.extractor = CitationExtractor()
        self.coalescer = Coalescer()
        self.flush_s: float = settings.RAG_STREAM_FLUSH_S
        self.held_since = 0.0  # loop time the coalescer began holding its text
        self.started = False
        self.sent_aliases: set[str] = set()

    async def run(self, composer: Composer, request: ComposeRequest) -> AsyncIterator[Envelope]:
        # The events one composer event (or the flush timer) makes are ready together and are
        # stored in one write: a citation and the sentence it closes, the pieces of a long delta.
        async with composer_paced(composer.compose(request)) as paced:
            while True:
                event = await paced.next(timeout_at=self._flush_at())
                if isinstance(event, NothingYet):  # held text has waited its time: show it
                    ready = [self._token(piece) for piece in self.coalescer.flush()]
                elif event is None:
                    return
                else:
                    ready = self._event(event)
                for envelope in await self._stored(ready):
                    yield envelope

    def _flush_at(self) -> float | None:
        return self.held_since + self.flush_s if self.coalescer.held else None

    async def _stored(self, ready: list[PendingEvent]) -> list[Envelope]:
        return await self.recorder.emit_many(ready) if ready else []

    def _event(self, event: ComposerEvent) -> list[PendingEvent]:
        if isinstance(event, TextDelta):
            self.started = self.started or bool(event.text.strip())
            return [ready for item in self.extractor.feed(event.text) for ready in self._item(item)]
        if isinstance(event, SupportSignal):
            self.outcome.support = event.value
            self.outcome.support_source = event.source
            self.outcome.support_signals = event.signals
        elif isinstance(event, Refusal):
            self.outcome.refused = True
            self.outcome.refusal_reason = event.reason
        return []

    async def close(self) -> AsyncIterator[Envelope]:
        ready = [pending for item in self.extractor.close() for pending in self._item(item)]
        ready += [self._token(piece) for piece in self.coalescer.flush()]
        for envelope in await self._stored(ready):
            yield envelope

    def _item(self, item: TextPiece | CitationMark) -> list[PendingEvent]:
        if isinstance(item, TextPiece):
            waited = self.coalescer.held
            pieces = self.coalescer.feed(item.text)
            if self.coalescer.held and (pieces or not waited):  # new text begins to wait
                self.held_since = asyncio.get_running_loop().time()
            return [self._token(piece) for piece in pieces]
        self.outcome.marks.append(item)
        chunk = self.aliases.get(item.alias)
        if chunk is None:
            logger.info("Dropped citation %s: not in this turn's context", item.alias)
            self.outcome.dropped.append(item.alias)
            return []
        if item.alias in self.sent_aliases:
            return []
        # The citation lands right after its sentence.
        ready = [self._token(piece) for piece in self.coalescer.flush()]
        self.sent_aliases.add(item.alias)
        record = citation_record(chunk, position=item.position)
        self.outcome.citations.append(record)
        return [*ready, (EventType.CITATION, citation_data(record))]

    def _token(self, text: str) -> PendingEvent:
        self.outcome.text += text
        return (EventType.TOKEN, {"text": text})


def citation_record(
    chunk: ContextChunk, *, position: int | None, kind: CitationKind = CitationKind.CITED
) -> CitationRecord:
    source = chunk.chunk
    return CitationRecord(
        alias=chunk.alias,
        chunk_id=source.chunk_id,
        document_id=source.document_id,
        title=source.display_title,
        source_file=source.filename,
        page=source.page,
        # The rows and lines of a table or a block, not their Markdown syntax.
        snippet=table_rules_removed(fence_marks_removed(source.text))[:400],
        position=position,
        kind=kind,
    )


def citation_data(record: CitationRecord) -> dict[str, object]:
    return {
        "alias": record.alias,
        "chunk": record.chunk_id,
        "document": record.document_id,
        "title": record.title,
        "source_file": record.source_file,
        "page": record.page,
        "snippet": record.snippet,
    }
