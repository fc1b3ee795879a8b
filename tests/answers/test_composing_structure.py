"""Sentences are quoted whole or not at all; navigation text (contents, headings) never is."""

from __future__ import annotations

import pytest

from apps.answers.composing.layout import clip
from apps.answers.composing.structure import never_answers
from tests.answers.compose import ask, composer, run, text_of, window

AUDIT = (
    "Audit page",
    "Query variants: the words retrieval searched with. A follow-up question "
    '("who stars in it?") was rewritten into a standalone query, shown under the question. '
    "Each variant lists the chunks it found.",
)
MANUAL = (
    "Offline upgrades",
    "Chapter 2: Using APT on both machines Table of Contents 2.1. Overview 2.2. The disc\n"
    "Chapter 4. The Interface\n"
    "APT fetches the package lists onto the disc when the online machine runs apt-get update.",
)


async def test_a_sentence_with_a_parenthesis_is_quoted_whole() -> None:
    question = "What was a follow-up question rewritten into?"

    text = text_of(await run(composer(min_evidence=0.0), ask(question, window(AUDIT))))

    assert 'A follow-up question ("who stars in it?") was rewritten into a standalone query' in text
    assert "searched with. was rewritten" not in text
    assert not text.lstrip().startswith("was rewritten")


async def test_a_table_of_contents_or_a_heading_is_never_quoted() -> None:
    question = "Using APT on both machines: what fetches the package lists onto the disc?"

    text = text_of(await run(composer(min_evidence=0.0), ask(question, window(MANUAL))))

    assert "APT fetches the package lists onto the disc" in text
    assert "Table of Contents" not in text
    assert "The Interface" not in text


@pytest.mark.parametrize(
    "line",
    [
        "Chapter 2: Using APT on both machines Table of Contents 2.1.",
        "Chapter 4. The Interface",
        "9.6.2. Disk partition configuration",
        "Introduction .......... 5",
        "فهرست مطالب فصل ۱",
    ],
)
def test_navigation_text_never_answers(line: str) -> None:
    assert never_answers(line)


@pytest.mark.parametrize(
    "sentence",
    [
        "Chapter 3 describes how to set up the disc.",
        "Section 2: Set APT_CONFIG before you run apt-get update.",
        'A follow-up question ("who stars in it?") was rewritten into a standalone query.',
    ],
)
def test_sentences_that_mention_chapters_or_quote_a_question_still_answer(sentence: str) -> None:
    assert not never_answers(sentence)


def test_a_long_sentence_is_never_clipped_inside_a_parenthesis() -> None:
    sentence = (
        "Sudo now runs commands with the core limit set to zero by default (this protects "
        "set-user-ID programs such as sudo) and more text follows here."
    )

    clipped = clip(sentence, 100)

    assert clipped == "Sudo now runs commands with the core limit set to zero by default…"
