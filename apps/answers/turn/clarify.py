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
    options = list(dict.fromkeys(c.display_title for c in found))[:3]
    question = _TEXT[lang] + (f" {_TOPICS[lang]} " + "; ".join(options) if options else "")
    return {"question": question, "options": options}
