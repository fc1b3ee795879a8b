"""What measure a question asks for, and whether sentences state it (composing/measures.py)."""

from __future__ import annotations

import pytest

from apps.answers.composing import Refusal
from apps.answers.composing.measures import (
    Measure,
    asked_measure,
    measure_unstated,
    states_measure,
)
from tests.answers.compose import ask, composer, run, text_of, window


@pytest.mark.parametrize(
    ("query", "measure"),
    [
        ("How long does apt wait for a JSON hook to answer the hello?", Measure.DURATION),
        ("for how long are cached credentials kept", Measure.DURATION),
        ("How often does the progress line refresh?", Measure.FREQUENCY),
        ("How big does the removable disc need to be?", Measure.SIZE),
        ("how much disk space does the cache take", Measure.SIZE),
        ("At what time of day does the daily job run?", Measure.TIME_OF_DAY),
        ("When was sudo 1.9.13 released?", Measure.RELEASE),
        ("Which apt version introduced Acquire::IndexTargets?", Measure.RELEASE),
        ("نشست چه مدت باز می‌ماند؟", Measure.DURATION),
        ("کار روزانه چه ساعتی اجرا می‌شود؟", Measure.TIME_OF_DAY),
    ],
)
def test_the_measure_a_question_asks_for(query: str, measure: Measure) -> None:
    assert asked_measure(query) is measure


@pytest.mark.parametrize(
    "query",
    [
        "How long ago was the club founded?",  # a date: answer_type.py reads it
        "How many basic types are there in Lua?",
        "What timeout is suggested for an anonymous daemon?",
        "When does logrotate exit with value 3?",
        "How do I keep a session open for long?",
    ],
)
def test_questions_that_ask_for_no_measure(query: str) -> None:
    assert asked_measure(query) is None


@pytest.mark.parametrize(
    ("text", "measure", "query", "expected"),
    [
        ("The line is refreshed every half second.", Measure.FREQUENCY, "How often?", True),
        ("CD-R discs last about 100 years.", Measure.DURATION, "How long do discs last?", True),
        ("The connection is dropped after 30s.", Measure.DURATION, "How long?", True),
        ("The protocol version is 0.2.", Measure.DURATION, "How long does it wait?", False),
        ("Use a disc of at least 650 MB.", Measure.SIZE, "How big must the disc be?", True),
        ("Use a large disc.", Measure.SIZE, "How big must the disc be?", False),
        (
            "The job runs at 6:25 every morning.",
            Measure.TIME_OF_DAY,
            "What time does it run?",
            True,
        ),
        ("The job runs daily.", Measure.TIME_OF_DAY, "At what time of day does it run?", False),
        ("It was added in apt 1.1.", Measure.RELEASE, "Which apt version added it?", True),
        # a version the question already holds is not an answer
        ("Sudo 1.9.13 fixes two bugs.", Measure.RELEASE, "When was sudo 1.9.13 released?", False),
        (
            "Sudo 1.9.13 came out in February 2023.",
            Measure.RELEASE,
            "When was 1.9.13 released?",
            True,
        ),
        ("جلسه پس از ۱۵ دقیقه بسته می‌شود.", Measure.DURATION, "چه مدت باز است؟", True),
    ],
)
def test_a_sentence_states_the_measure(
    text: str, measure: Measure, query: str, *, expected: bool
) -> None:
    assert states_measure(text, measure, query=query) is expected


def test_a_unit_in_one_sentence_and_the_figure_in_the_next_state_a_duration() -> None:
    sentences = ["The interval is given in seconds.", "The default is 30."]

    assert measure_unstated("How long is the interval by default?", sentences) is None
    assert measure_unstated("How long is the interval?", ["The interval is set per host."]) is (
        Measure.DURATION
    )


HOOKS = (
    "JSON hooks",
    "APT sends a hello message to the hook and the hook answers it. The protocol version "
    "is 0.2. The hook may then receive notifications until APT sends bye.",
)
PROGRESS = (
    "Progress",
    "The download progress line is refreshed every half second. It shows the items fetched "
    "and the bytes left.",
)


async def test_a_duration_question_whose_passages_state_no_duration_is_refused() -> None:
    events = await run(
        composer(), ask("How long does APT wait for the hook to answer the hello?", window(HOOKS))
    )

    refusal = events[-1]
    assert isinstance(refusal, Refusal)
    assert refusal.reason == "asks for a duration, none stated"


async def test_a_frequency_stated_in_words_is_an_answer() -> None:
    events = await run(
        composer(), ask("How often does the download progress line refresh?", window(PROGRESS))
    )

    assert not any(isinstance(e, Refusal) for e in events)
    assert "every half second" in text_of(events)
