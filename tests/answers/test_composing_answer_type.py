"""Quantity questions: which questions ask for a number, and which sentences state one."""

from __future__ import annotations

import pytest

from apps.answers.composing.answer_type import asks_for_quantity, states_quantity


@pytest.mark.parametrize(
    "query",
    [
        "How many days of leave do I get?",
        "how much does the parking permit cost",
        "In which year was the office opened?",
        "What year did the policy change?",
        "How old must an applicant be?",
        "رئال مادرید چند بار قهرمان اروپا شده؟",
        "هند از لحاظ جمعیت چندمین کشور دنیا است؟",
        "باشگاه در چه سالی تاسیس شد؟",
        "چه تعداد کارمند دارد؟",
        "حقوق ماهانه چقدر است؟",
    ],
)
def test_quantity_questions_are_recognised(query: str) -> None:
    assert asks_for_quantity(query)


@pytest.mark.parametrize(
    "query",
    [
        "When must expense claims be submitted?",  # "after the trip" answers it
        "Who approves leave requests?",
        "What is the many-worlds interpretation?",
        "پایتخت اسپانیا کجاست؟",
        "چرا لوط و ابراهیم از هم جدا شدند؟",
        "چندگانگی فرهنگی چیست؟",  # a word that starts with چند is not the question word
    ],
)
def test_other_questions_are_not(query: str) -> None:
    assert not asks_for_quantity(query)


@pytest.mark.parametrize(
    ("text", "query", "expected"),
    [
        ("Employees receive 25 days of annual leave.", "How many days?", True),
        ("Sick leave is paid for up to ten days a year.", "How many days?", True),
        ("Leave must be requested in advance.", "How many days?", False),
        # the number the question already holds is not an answer to it
        ("The Peugeot 405 is built in Iran.", "How many Peugeot 405 were sold?", False),
        ("هر کارمند در سال ۲۶ روز مرخصی دارد.", "چند روز مرخصی دارم؟", True),
        ("باشگاه در سال 1902 تاسیس شد.", "باشگاه در چه سالی تاسیس شد؟", True),
        ("آن‌ها دارای رکورد سی و چهار بار قهرمانی هستند.", "چند بار قهرمان شدند؟", True),
        # "یک" is also the indefinite article: it does not state a quantity
        ("مریم یک زن یهودی از شهر ناصره بود.", "چند فرزند داشت؟", False),
        ("He was born in a small town.", "How many brothers did he have?", False),
    ],
)
def test_a_sentence_states_a_quantity_the_question_does_not_hold(
    text: str, query: str, expected: bool
) -> None:
    assert states_quantity(text, query=query) is expected
