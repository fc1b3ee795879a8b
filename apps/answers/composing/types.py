"""Values passed into and out of a composer, and the contract every composer meets."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from apps.answers.retrieval.types import Bridge, ContextWindow
from apps.answers.routing.types import HistoryMessage, Intent
from apps.corpus.text import Language
from ragplatform.errors import FailureCode

# ComposerError codes, which become the failed event's code. Before any text the turn
# service falls back to the extractive composer; after text (`MODEL_INTERRUPTED`, or
# `ANSWER_TRUNCATED` at the token limit) it keeps what was sent and marks it partial.
MODEL_UNAVAILABLE = FailureCode.MODEL_UNAVAILABLE
MODEL_TIMEOUT = FailureCode.MODEL_TIMEOUT
MODEL_INTERRUPTED = FailureCode.MODEL_INTERRUPTED
ANSWER_TRUNCATED = FailureCode.ANSWER_TRUNCATED  # after text, like MODEL_INTERRUPTED
EMPTY_ANSWER = FailureCode.EMPTY_ANSWER


@dataclass(frozen=True)
class ComposeRequest:
    query: str
    intent: Intent
    language: Language
    context: ContextWindow
    history: tuple[HistoryMessage, ...] = ()
    # Low-confidence route: a short summary only (the document list is sent separately).
    hybrid: bool = False
    # Multi-hop: the bridges retrieval followed, so the answer can cite a passage per hop.
    bridges: tuple[Bridge, ...] = ()
    # The embedding of `query` retrieval made (the same model's), so it is not made twice.
    query_vector: tuple[float, ...] | None = None


@dataclass(frozen=True)
class TextDelta:
    text: str  # raw answer text; may contain [cN] markers, which the turn pipeline strips


@dataclass(frozen=True)
class SupportSignal:
    """The composer's own 0-1 estimate that its answer is supported by the sources."""

    value: float
    source: str  # how it was obtained: evidence-coverage, self-reported, marker-coverage, ...
    # What the composer weighed to decide between answer and refusal, by name (the extractive
    # composer's answerability signals); kept so an evaluation can replay the decision.
    signals: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and 0.0 <= self.value <= 1.0):
            raise ValueError(f"support must be within [0, 1], got {self.value!r}")


@dataclass(frozen=True)
class Refusal:
    """The composer decided the documents do not answer; the text it streamed says so."""

    reason: str


ComposerEvent: TypeAlias = TextDelta | SupportSignal | Refusal


class Composer(Protocol):
    name: str

    # Declared without `async` so that an `async def ... yield` implementation matches it.
    # Events come in this order: TextDelta..., then at most one SupportSignal, then at
    # most one Refusal.
    def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]: ...


class ComposerError(Exception):
    """Composition failed; raised before any text unless the code is `model_interrupted` or
    `answer_truncated` (the text sent so far is then kept as a partial answer)."""

    def __init__(self, code: FailureCode, message: str = "", *, retryable: bool = False) -> None:
        super().__init__(message or code)
        self.code = FailureCode(code)  # a plain "model_timeout" is read as its member
        self.retryable = retryable
