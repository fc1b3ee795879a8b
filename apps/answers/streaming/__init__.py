"""Pure text machinery for streamed answers: citation markers and readable pieces.

No Django here, so the same code serves the WebSocket and SSE paths and is tested
without a database.
"""

from apps.answers.streaming.citations import (
    CitationExtractor,
    CitationMark,
    StreamItem,
    TextPiece,
    ValidatedCitations,
    citations_validate,
    escape_markers,
    extract_citations,
    sentences_without_citation,
    uncited_share,
)
from apps.answers.streaming.coalesce import Coalescer

__all__ = [
    "CitationExtractor",
    "CitationMark",
    "Coalescer",
    "StreamItem",
    "TextPiece",
    "ValidatedCitations",
    "citations_validate",
    "escape_markers",
    "extract_citations",
    "sentences_without_citation",
    "uncited_share",
]
