"""Composition: turn a query and its context window into streamed, cited answer text.

Pure of Django: the turn service builds the request, picks the composer and wires the
events into the stream. Every composer meets the `Composer` protocol in `types`.
"""

from apps.answers.composing.confidence import (
    ConfidenceBand,
    confidence_band,
    confidence_blend,
    expected_calibration_error,
    retrieval_quality,
)
from apps.answers.composing.conversational import ConversationalResponder
from apps.answers.composing.extractive import ExtractiveComposer
from apps.answers.composing.followups import followups_suggest
from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.composing.types import (
    ANSWER_TRUNCATED,
    EMPTY_ANSWER,
    MODEL_INTERRUPTED,
    MODEL_TIMEOUT,
    MODEL_UNAVAILABLE,
    Composer,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)

__all__ = [
    "ANSWER_TRUNCATED",
    "EMPTY_ANSWER",
    "MODEL_INTERRUPTED",
    "MODEL_TIMEOUT",
    "MODEL_UNAVAILABLE",
    "ComposeRequest",
    "Composer",
    "ComposerError",
    "ComposerEvent",
    "ConfidenceBand",
    "ConversationalResponder",
    "ExtractiveComposer",
    "OpenAIComposer",
    "Refusal",
    "SupportSignal",
    "TextDelta",
    "confidence_band",
    "confidence_blend",
    "expected_calibration_error",
    "followups_suggest",
    "retrieval_quality",
]
