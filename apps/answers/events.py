"""The typed events of one turn, shared by the WebSocket, SSE and `manage.py ask` streams.

Every event travels in one envelope: {"seq": n, "turn": id, "type": ..., "data": {...}}.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypedDict


class EventType(StrEnum):
    CLASSIFICATION = "classification"
    SEARCH_RESULTS = "search_results"
    CLARIFICATION = "clarification"
    TOKEN = "token"  # noqa: S105 - an event name, not a secret
    CITATION = "citation"
    CONFIDENCE = "confidence"
    FOLLOWUPS = "followups"
    FINISHED = "finished"
    FAILED = "failed"


TERMINAL_EVENTS = frozenset({EventType.FINISHED, EventType.FAILED})


class Envelope(TypedDict):
    seq: int
    turn: int
    type: str
    data: dict[str, Any]


class FailureCode(StrEnum):
    """Why a turn failed or a request was refused, the same on the WebSocket and over HTTP."""

    UNAUTHENTICATED = "unauthenticated"
    NOT_ACCEPTABLE = "not_acceptable"
    INVALID_REQUEST = "invalid_request"
    NOT_FOUND = "not_found"
    RATE_LIMITED = "rate_limited"
    CANCELLED = "cancelled"
    MODEL_UNAVAILABLE = "model_unavailable"
    MODEL_TIMEOUT = "model_timeout"
    MODEL_INTERRUPTED = "model_interrupted"
    # The model hit its token limit (finish_reason "length"): the answer is kept, marked partial.
    ANSWER_TRUNCATED = "answer_truncated"
    EMPTY_ANSWER = "empty_answer"
    INTERRUPTED = "interrupted"  # the process answering it stopped (its lease lapsed)
    INTERNAL = "internal_error"


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
