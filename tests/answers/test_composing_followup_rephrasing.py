"""Follow-ups made from the question itself: rephrasings toward the closest documents after a
refusal, the parts an answer left unanswered, and never a question asked before."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from apps.answers.composing import followups_suggest
from apps.answers.composing.followup_rephrasing import (
    FSI,
    PDI,
    question_topic,
    unanswered_questions,
)
from apps.answers.retrieval.types import Candidate, ContextWindow, RetrievedChunk
from tests.answers.fakes import retrieved_chunk
from tests.conftest import CountingEmbedder

EMPTY = ContextWindow((), 1000, 0, ())


def chunk(index: int, title: str, text: str, *, heading: str = "", **fields: Any) -> RetrievedChunk:
    return replace(retrieved_chunk(index, text, title=title, heading=heading), **fields)


async def refused(query: str, candidates: list[RetrievedChunk], **overrides: object) -> list[str]:
    arguments: dict[str, object] = {
        "query": query,
        "answer_text": "The documents do not say.",
        "context": EMPTY,
        "cited_aliases": set(),
        "candidates": candidates,
        "embedder": CountingEmbedder(),
        "language": "en",
        "refused": True,
    }
    arguments.update(overrides)
    return await followups_suggest(**arguments)  # type: ignore[arg-type]


async def test_after_a_refusal_only_the_question_asked_of_the_closest_documents() -> None:
    candidates = [
        # Found through a rewrite that carried the previous turn's terms.
        chunk(
            1,
            "Laptop guide",
            "Sign in with the password.",
            candidate=Candidate(1, variant="rewrite"),
        ),
        chunk(
            2, "Travel handbook", "Contractors claim a per diem of 60 euros.", heading="Allowances"
        ),
        chunk(
            3, "Travel handbook", "The per diem is paid monthly.", heading="Payments", document_id=2
        ),
        chunk(4, "Expense policy", "Receipts are needed for every per diem claim."),
    ]

    questions = await refused("What is the per diem for contractors?", candidates)

    assert questions == [
        "What does Travel handbook say about the per diem for contractors?",
        "What does Expense policy say about the per diem for contractors?",
        "What does the “Payments” section say about the per diem for contractors?",
    ]


async def test_a_persian_rephrasing_isolates_a_latin_title() -> None:
    candidates = [chunk(1, "Travel handbook", "کمک‌هزینه روزانه پیمانکاران ۶۰ یورو است.")]

    questions = await refused("کمک‌هزینه روزانه پیمانکاران چقدر است؟", candidates, language="fa")

    assert questions == [
        f"«{FSI}Travel handbook{PDI}» درباره‌ی کمک‌هزینه روزانه پیمانکاران چه می‌گوید؟"
    ]


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("What is the per diem for contractors?", "the per diem for contractors"),
        ("How do I reset my password?", "how to reset my password"),
        ("What does SLA mean?", "SLA"),
        ("Tell me about the parking rules", "the parking rules"),
        ("When does the office open?", "the office open"),
    ],
)
def test_the_topic_of_a_question_is_its_own_phrase(question: str, topic: str) -> None:
    assert question_topic(question, language="en") == topic


async def test_a_question_asked_earlier_in_the_conversation_is_never_suggested() -> None:
    candidates = [chunk(1, "Travel handbook", "The per diem is 60 euros.")]
    earlier = "What does Travel handbook say about the per diem for contractors?"

    questions = await refused("What is the per diem for contractors?", candidates, asked=[earlier])

    assert questions == []


def test_the_part_of_a_question_the_answer_left_out_is_asked_on_its_own() -> None:
    question = "How do I install the client and configure the proxy?"

    left = unanswered_questions(
        query=question, answer_text="Install the client from the portal.", language="en"
    )
    none_left = unanswered_questions(
        query=question, answer_text="Install the client, then set the proxy.", language="en"
    )

    assert left == ["How do I configure the proxy?"]
    assert none_left == []
    # "A and B" is one thing asked about, not two questions.
    assert (
        unanswered_questions(
            query="What is the difference between leave and holidays?",
            answer_text="Leave is paid.",
            language="en",
        )
        == []
    )
