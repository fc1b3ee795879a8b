"""The query router: intent, tier and strategy for each question, before any retrieval.

Pure Python (no Django): classifiers, the routing policy and evaluation take data
and paths, so management commands and services only wire them up.
"""

from apps.answers.routing.policy import (
    RoutingDecision,
    classify_safely,
    fallback_classification,
    routing_decide,
)
from apps.answers.routing.types import (
    STRATEGY_FOR_TIER,
    Classification,
    ClassifierError,
    HistoryMessage,
    Intent,
    QueryClassifier,
    Strategy,
    Tier,
    TurnAction,
)
from apps.answers.routing.window import conversation_window

__all__ = [
    "STRATEGY_FOR_TIER",
    "Classification",
    "ClassifierError",
    "HistoryMessage",
    "Intent",
    "QueryClassifier",
    "RoutingDecision",
    "Strategy",
    "Tier",
    "TurnAction",
    "classify_safely",
    "conversation_window",
    "fallback_classification",
    "routing_decide",
]
