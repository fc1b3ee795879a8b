"""What each stage of a turn hands to the store: one frozen value per write, so every column a
stage sets is named here and nowhere else (the services in `services.py` write them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.routing.types import Intent, Strategy, Tier, TurnAction
from apps.corpus.text import Language
from ragplatform.errors import FailureCode


@dataclass(frozen=True)
class TurnClassified:
    """The router's verdict and the policy's decision (the `classification` event)."""

    intent: Intent
    router_confidence: float
    tier: Tier
    strategy: Strategy
    action: TurnAction
    language: Language
    classification: dict[str, Any]


@dataclass(frozen=True)
class TurnRetrieved:
    """What retrieval did: its trace (variants, candidates, timings) and the models it used."""

    retrieval_trace: dict[str, Any]
    models_used: dict[str, str]


@dataclass(frozen=True)
class TurnFinished:
    """A turn that ended with a reply: an answer, a clarifying question, search results or chat."""

    answer: str
    action: TurnAction  # the route the turn took; stored on the turn and sent in `finished`
    composer: str = ""
    confidence: float | None = None
    confidence_band: ConfidenceBand | None = None  # None: no answer to rate (clarify, search, chat)
    refused: bool = False
    refusal_reason: str = ""  # why the composer refused, for the audit ("evidence 0.45 below 0.49")
    followups: tuple[str, ...] = ()
    fallback_reason: str = ""
    dropped_citations: tuple[str, ...] = ()
    unsupported_sentences: int = 0
    confidence_inputs: dict[str, Any] = field(default_factory=dict)  # what the badge read
    citations: int = 0  # how many citations the answer carries (for the `finished` event)
    timings_ms: dict[str, Any] = field(default_factory=dict)

    def event_data(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "action": str(self.action),
            "citations": self.citations,
            "confidence": self.confidence,
            "refused": self.refused,
            "composer": self.composer,
        }


@dataclass(frozen=True)
class TurnFailed:
    """A turn that ended without a complete reply; a partial answer is kept."""

    code: FailureCode
    message: str
    answer: str = ""
    partial: bool = False
    composer: str = ""
    timings_ms: dict[str, Any] = field(default_factory=dict)


TurnOutcome = TurnFinished | TurnFailed


@dataclass(frozen=True)
class TurnUsage:
    """Tokens spent by every model call of the turn, and whether the servers reported them
    ("reported") or some were estimated from the text ("estimated", "partly estimated")."""

    prompt_tokens: int
    completion_tokens: int
    source: str
