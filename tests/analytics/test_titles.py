"""Titles from the question's form, without a model (apps/analytics/titles.py)."""

from __future__ import annotations

import pytest

from apps.analytics.titles import TITLE_MAX_CHARS, gerund, title_from_question


@pytest.mark.parametrize(
    ("question", "title"),
    [
        # The asker's action becomes the topic, as a gerund.
        ("How do I upload several files at once?", "Uploading several files at once"),
        ("how can we submit a document", "Submitting a document"),
        ("Please, how to set up the proxy?", "Setting up the proxy"),
        ("Can I work from abroad?", "Working from abroad"),
        # What something is keeps "what"; a named thing is the topic itself.
        ("What is a chunk?", "What a chunk is"),
        ("What are embeddings?", "What embeddings are"),
        (
            "What is the difference between search and answer?",
            "The difference between search and answer",
        ),
        ("Tell me about the VPN", "The VPN"),
        # Any other form keeps its words whole: never cut at some word.
        (
            "How does the router decide which route to take?",
            "How does the router decide which route to take",
        ),
        ("I uploaded a PDF. Why is it not searchable?", "Why is it not searchable"),
        # Persian: the compound verb's noun leads, «چگونگی» keeps "how".
        ("چگونه چند فایل را همزمان بارگذاری کنم؟", "چگونگی بارگذاری چند فایل همزمان"),
        ("چطور می‌توانم رمز عبورم را تغییر دهم؟", "چگونگی تغییر رمز عبورم"),
        ("کارمندان چند روز مرخصی دارند؟", "کارمندان چند روز مرخصی دارند"),
        ("چگونه فایل را بفرستم؟", "چگونه فایل را بفرستم"),
        ("hello", None),
    ],
)
def test_a_title_reads_as_the_topic(question: str, title: str | None) -> None:
    assert title_from_question(question) == title


@pytest.mark.parametrize(
    ("verb", "form"),
    [
        ("upload", "uploading"),
        ("use", "using"),
        ("set", "setting"),
        ("tie", "tying"),
        ("see", "seeing"),
        ("submit", "submitting"),
        ("open", "opening"),
        ("fix", "fixing"),
    ],
)
def test_gerund(verb: str, form: str) -> None:
    assert gerund(verb) == form


def test_a_very_long_question_is_cut_between_words() -> None:
    title = title_from_question("Why " + "does this really long question go on " * 20 + "?")
    assert title is not None and len(title) <= TITLE_MAX_CHARS and title.endswith("…")
    assert title[:-1].split()[-1] in {"does", "this", "really", "long", "question", "go", "on"}
