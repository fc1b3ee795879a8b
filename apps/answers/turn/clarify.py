"""The clarifying question asked when the router is too unsure to answer."""

from __future__ import annotations

from collections.abc import Sequence

from apps.answers.retrieval.types import RetrievedChunk

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
        first.setdefault(chunk.display_title, chunk.document_id)
    options = list(first)[:3]
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
