"""The typed events of one turn, shared by the WebSocket, SSE and `manage.py ask` streams.

Every event travels in one envelope: {"seq": n, "turn": id, "type": ..., "data": {...}}.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypedDict

from ragplatform.errors import FailureCode


class EventType(StrEnum):
    CLASSIFICATION = "classification"
    SEARCH_RESULTS = "search_results"
    CLARIFICATION = "clarification"
    PROGRESS = "progress"  # what the turn is doing before its text: {"stage": ProgressStage}
    TOKEN = "token"  # noqa: S105 - an event name, not a secret
    CITATION = "citation"
    CONFIDENCE = "confidence"
    FOLLOWUPS = "followups"
    FINISHED = "finished"
    FAILED = "failed"


class ProgressStage(StrEnum):
    """Searching is what a turn does from its start; a `progress` event says when it moves on
    to writing: the composer has its context and is at work, and the text comes next."""

    SEARCHING = "searching"
    WRITING = "writing"


TERMINAL_EVENTS = frozenset({EventType.FINISHED, EventType.FAILED})


class Envelope(TypedDict):
    seq: int
    turn: int
    type: str
    data: dict[str, Any]


RETRYABLE = frozenset(
    {
        FailureCode.CANCELLED,
        FailureCode.MODEL_UNAVAILABLE,
        FailureCode.MODEL_TIMEOUT,
        FailureCode.MODEL_INTERRUPTED,
        FailureCode.INTERRUPTED,
        FailureCode.INTERNAL,
    }
)


def failed_data(code: FailureCode, message: str) -> dict[str, Any]:
    return {"code": str(code), "message": message, "retryable": code in RETRYABLE}


def rejection(code: FailureCode, message: str) -> dict[str, Any]:
    """A failed envelope of no turn (seq 0: it is not stored): a socket message that started
    nothing, or a stream ended by an unreachable database."""
    return {
        "seq": 0,
        "turn": None,
        "type": str(EventType.FAILED),
        "data": failed_data(code, message),
    }
