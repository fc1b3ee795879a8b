"""A question that asks for several things: the answer says plainly which it does not give."""

from __future__ import annotations

import pytest

from apps.answers.composing.parts import asked_parts
from tests.answers.compose import ask, composer, run, text_of, window

TIMEOUTS = (
    "Timeouts",
    "The default timeout of an upload is 30 seconds. Uploads are retried three times.",
)
BOTH = (
    "Timeouts",
    "The default timeout of an upload is 30 seconds. The maximum timeout is 300 seconds.",
)


async def test_a_part_the_documents_leave_out_is_named_plainly() -> None:
    query = "What is the default upload timeout and the maximum?"

    text = text_of(await run(composer(min_evidence=0.0), ask(query, window(TIMEOUTS))))

    assert "The default timeout of an upload is 30 seconds [c1]." in text
    assert text.endswith("The documents do not give the maximum.")


async def test_nothing_is_said_when_every_part_is_answered() -> None:
    query = "What is the default upload timeout and the maximum?"

    text = text_of(await run(composer(min_evidence=0.0), ask(query, window(BOTH))))

    assert "300 seconds" in text
    assert "do not give" not in text


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("What is the default timeout and the maximum?", ("the default timeout", "the maximum")),
        (
            "What are the name, the version and the licence?",
            ("the name", "the version", "the licence"),
        ),
        ("حداکثر و پیش‌فرض مهلت چیست؟", ("حداکثر", "پیش‌فرض مهلت")),
        ("What is rsync and how does it work?", ()),  # a second question, not a part
        ("What is the difference between X and Y?", ()),  # a comparison
        ("How do I install and configure it?", ()),  # asks how, not for things
        ("What is the leave policy?", ()),
    ],
)
def test_the_parts_are_the_things_asked_for(query: str, parts: tuple[str, ...]) -> None:
    assert asked_parts(query) == parts
