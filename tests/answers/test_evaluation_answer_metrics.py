"""SQuAD-style answer metrics with Persian normalisation."""

from __future__ import annotations

import pytest

from apps.answers.evaluation.answer_metrics import (
    answer_tokens,
    contains_answer,
    exact_match,
    token_f1,
)
from apps.answers.evaluation.answers import AnsweredQuestion, AnswerScores, _score_answerable
from apps.answers.evaluation.beir import BeirQuery


def test_tokens_fold_case_punctuation_articles_and_persian_forms() -> None:
    assert answer_tokens("The Eiffel Tower!") == ["eiffel", "tower"]
    assert answer_tokens("كتاب‌ها ۱۲") == answer_tokens("کتاب ها 12") == ["کتاب", "ها", "12"]


@pytest.mark.parametrize(
    ("text", "golds", "expected"),
    [
        ("It is not allowed.", ["no"], False),  # a short answer never matches inside a word
        ("No, it is not.", ["no"], True),
        ("He was born in Paris, France.", ["paris"], True),
        ("He was born in Parisville.", ["Paris"], False),
        ("در سال ۱۳۵۷ رخ داد", ["1357"], True),
        ("", ["anything"], False),
    ],
)
def test_contains_answer_matches_whole_words_only(
    text: str, golds: list[str], expected: bool
) -> None:
    assert contains_answer(text, golds) is expected


def test_exact_match_and_f1() -> None:
    assert exact_match("the Eiffel tower", ["Eiffel Tower"])
    assert not exact_match("the tower", ["Eiffel Tower"])
    assert token_f1("the tower", ["Eiffel Tower"]) == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert token_f1("nothing here", ["Eiffel Tower"]) == 0.0
    assert token_f1("anything", []) == 0.0


def test_a_refusal_never_counts_as_containing_the_answer() -> None:
    query = BeirQuery(
        query_id="q1", text="Where?", relevant={"doc1": 1}, extra={"answers": ["Paris"]}
    )
    refusal = AnsweredQuestion("I could not find it. Closest: Paris", ("doc1",), True, 0.2)
    answer = AnsweredQuestion("It is in Paris [c1].", ("doc1",), False, 0.8)
    scores = AnswerScores()
    for answered in (refusal, answer):
        _score_answerable(scores, query, answered)
    assert scores.gold_contained == [False, True]
    assert scores.f1[0] == 0.0 and scores.f1[1] > 0.0
    summary = scores.summary()
    assert summary["gold_answer_contained"] == 0.5 and "exact_match" in summary
