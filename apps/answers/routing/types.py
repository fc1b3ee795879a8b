"""The router's vocabulary: intents, tiers, strategies, actions and the classification they form.

The definitions below are the single source of truth for what a tier means; the
LLM classifier puts them in its prompt and the labelled query set follows them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Literal, Protocol

from apps.corpus.text.language import Language


class Intent(StrEnum):
    FACTUAL_QUESTION = "factual_question"
    SEARCH = "search"
    COMPARISON = "comparison"
    PROCEDURAL = "procedural"
    CONVERSATIONAL = "conversational"


class Tier(StrEnum):
    T0 = "T0"
    T1 = "T1"
    T2 = "T2"
    T3 = "T3"


class Strategy(StrEnum):
    NONE = "none"
    SIMPLE = "simple"
    MODERATE = "moderate"
    COMPLEX = "complex"


class TurnAction(StrEnum):
    """What a turn does with its question. The routing policy decides answer, hybrid or
    clarify; a search or conversational intent then ends the turn as search or chat."""

    ANSWER = "answer"
    HYBRID = "hybrid"  # answered, with the document list shown as well: the router was unsure
    CLARIFY = "clarify"
    SEARCH = "search"
    CHAT = "chat"


STRATEGY_FOR_TIER: Mapping[Tier, Strategy] = MappingProxyType(
    {
        Tier.T0: Strategy.NONE,
        Tier.T1: Strategy.SIMPLE,
        Tier.T2: Strategy.MODERATE,
        Tier.T3: Strategy.COMPLEX,
    }
)

TIER_ORDER: tuple[Tier, ...] = (Tier.T0, Tier.T1, Tier.T2, Tier.T3)

TIER_DEFINITIONS: Mapping[Tier, str] = MappingProxyType(
    {
        Tier.T0: (
            "no retrieval: greetings, chit-chat, thanks, reactions, and questions about "
            "the assistant itself"
        ),
        Tier.T1: "one simple lookup: a single fact, a definition, or a single how-to",
        Tier.T2: (
            "moderate: needs several passages or synthesis, vague or underspecified "
            "queries, short comparisons of two things"
        ),
        Tier.T3: (
            "complex: multi-part or multi-hop questions, comparisons across several "
            "entities or documents, 'and then' chains; needs decomposition"
        ),
    }
)

STRATEGY_DEFINITIONS: Mapping[Strategy, str] = MappingProxyType(
    {
        Strategy.NONE: "answer directly without retrieval (T0)",
        Strategy.SIMPLE: "one retrieval pass, then compose (T1)",
        Strategy.MODERATE: "retrieval expanded with a hypothetical answer (HyDE), then compose (T2)",
        Strategy.COMPLEX: "decompose into sub-questions, iterative multi-hop retrieval (T3)",
    }
)

INTENT_DESCRIPTIONS: Mapping[Intent, str] = MappingProxyType(
    {
        Intent.FACTUAL_QUESTION: "asks for a fact, a definition, a rule or an explanation",
        Intent.SEARCH: "wants documents or files listed or found, not an answer",
        Intent.COMPARISON: "compares two or more options, versions, plans or entities",
        Intent.PROCEDURAL: "asks how to do something: steps, a process, instructions",
        Intent.CONVERSATIONAL: "greeting, thanks, chit-chat, feedback or questions about the assistant",
    }
)

CLASSIFIER_NAMES: frozenset[str] = frozenset({"trained", "llm", "fallback"})


@dataclass(frozen=True)
class HistoryMessage:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class Classification:
    intent: Intent
    confidence: float
    tier: Tier
    strategy: Strategy
    decomposed_steps: tuple[str, ...]
    language: Language
    reasoning: str
    classifier: str
    # Set when the configured classifier failed and another one decided: why it failed.
    fallback_reason: str = ""

    def __post_init__(self) -> None:
        # Validated here so that no classifier, however broken, can hand on a bad value.
        if not (math.isfinite(self.confidence) and 0.0 <= self.confidence <= 1.0):
            raise ValueError(f"confidence must be within [0, 1], got {self.confidence!r}")
        # A plain "en" becomes Language.EN; anything else is not a language the platform reads.
        object.__setattr__(self, "language", Language(self.language))
        if self.classifier not in CLASSIFIER_NAMES:
            raise ValueError(f"unknown classifier name {self.classifier!r}")
        if not isinstance(self.decomposed_steps, tuple):
            raise TypeError("decomposed_steps must be a tuple")

    def as_dict(self) -> dict[str, object]:
        return {
            "intent": str(self.intent),
            "confidence": self.confidence,
            "tier": str(self.tier),
            "strategy": str(self.strategy),
            "decomposed_steps": list(self.decomposed_steps),
            "language": self.language,
            "reasoning": self.reasoning,
            "classifier": self.classifier,
            **({"fallback_reason": self.fallback_reason} if self.fallback_reason else {}),
        }


class QueryClassifier(Protocol):
    name: str

    async def classify(
        self, *, query: str, history: Sequence[HistoryMessage]
    ) -> Classification: ...


class ClassifierError(Exception):
    """The classifier could not produce a classification; the caller falls back."""
