"""The clarifying question asked when the router is too unsure to answer, or the query too
vague; and whether the first pass's passages hold a question's terms well enough to answer it."""

from __future__ import annotations

from collections.abc import Sequence

from apps.answers.composing.terms import content_terms
from apps.answers.retrieval.types import RetrievedChunk
from apps.corpus.parsing.blocks import HEADING_SEPARATOR  # a chunk's path of headings

TOPICS = 3  # topics offered, and the best passages a question's terms are looked for in

_TEXT = {
    "en": (
        "I'm not sure what you are asking. Could you say a little more — for example which "
        "topic, document or step you mean?"
    ),
    "fa": "مطمئن نیستم منظورتان چیست. لطفاً کمی بیشتر توضیح دهید؛ مثلاً کدام موضوع، سند یا مرحله مد نظرتان است؟",
}
_TOPICS = {"en": "Topics I found that might be related:", "fa": "موضوع‌هایی که شاید مرتبط باشند:"}


def clarification_data(*, language: str, found: Sequence[RetrievedChunk]) -> dict[str, object]:
    lang = language if language in _TEXT else "en"
    first: dict[str, int] = {}
    for chunk in found:
        first.setdefault(_topic(chunk), chunk.document_id)
    options = list(first)[:TOPICS]
    return {
        "question": clarification_question(language=lang, options=options),
        "options": options,
        # Each option's document, so a replay can drop topics its reader may no longer see.
        "documents": [first[o] for o in options],
        "language": lang,
    }


def clarification_question(*, language: str, options: Sequence[str]) -> str:
    lang = language if language in _TEXT else "en"
    return _TEXT[lang] + (f" {_TOPICS[lang]} " + "; ".join(options) if options else "")


def _topic(chunk: RetrievedChunk) -> str:
    """A section a reader can name: its heading with its document's title, never a cut
    sentence of its text ("P The P option is equivalent to partial…")."""
    document = chunk.title or chunk.filename
    section = chunk.heading.rpartition(HEADING_SEPARATOR)[2].strip()  # the innermost heading
    return f"{section} ({document})" if section and section != document else document


def terms_matched_share(
    *, query: str, found: Sequence[RetrievedChunk], headings_only: bool = False
) -> float:
    """The share of the query's content terms that its best passages hold (their text,
    heading and title; or with `headings_only`, heading and title); 0 for a query with none."""
    asked = content_terms(query)
    if not asked:
        return 0.0
    held: set[str] = set()
    for chunk in found[:TOPICS]:
        text = "" if headings_only else chunk.text
        held |= content_terms(f"{chunk.title} {chunk.heading} {text}")
    return len(asked & held) / len(asked)
