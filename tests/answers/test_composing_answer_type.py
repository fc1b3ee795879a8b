"""Answer types: which questions ask for a number (a date, a name), and which sentences state one."""

from __future__ import annotations

import pytest

from apps.answers.composing.answer_type import (
    TYPE_TERMS,
    AnswerKind,
    AnswerType,
    answer_kind,
    asks_for_quantity,
    expected_answer_type,
    states_kind,
    states_quantity,
    typed_match,
)
from apps.answers.composing.terms import content_terms


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
        "ایران چند استان دارد؟",  # before a noun, as the only question word: how many
        "قیمت بلیت چند است؟",  # before a verb
        "دوره چند؟",  # alone
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
        # «چند» before a noun in a question asked with another word: "several"
        "چگونه چند فایل را هم‌زمان بارگذاری کنم؟",
        "آیا می‌توانم چند کاربر را با هم حذف کنم؟",
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


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("What is the per diem for contractors?", AnswerType.NUMBER),
        ("What's the daily allowance for interns?", AnswerType.NUMBER),
        ("What is the fee for a second badge?", AnswerType.NUMBER),
        ("هزینه ثبت نام چقدر است؟", AnswerType.NUMBER),
        ("When must expense claims be submitted?", AnswerType.DATE),
        ("کتاب در چه زمانی منتشر شد؟", AnswerType.DATE),
        ("Who approves travel requests?", AnswerType.NAME),
        ("What is the parking policy for visitors?", None),
        ("How do I reset my password?", None),
    ],
)
def test_the_expected_answer_type_is_read_from_the_question(
    query: str, kind: AnswerType | None
) -> None:
    assert expected_answer_type(query) is kind


@pytest.mark.parametrize(
    ("query", "sentence", "matches"),
    [
        ("What is the per diem for contractors?", "Contractors receive 60 euros a day.", True),
        # The key term is missing: the figure is someone else's.
        ("What is the per diem for interns?", "Contractors receive 60 euros a day.", False),
        # The key term without a figure.
        ("What is the per diem for contractors?", "Contractors are paid per diem.", False),
        ("When are expense claims paid?", "Expense claims are paid in March.", True),
        ("When are expense claims paid?", "Expense claims are paid after approval.", False),
        ("Who approves travel requests?", "Travel requests are approved by Maria Lopez.", True),
        ("Who approves travel requests?", "Travel requests are approved by your manager.", False),
        # Not a typed question: no match, whatever the sentence says.
        ("Describe the travel policy", "The travel policy changed in 2020.", False),
    ],
)
def test_a_typed_match_needs_the_key_terms_and_an_answer_of_the_asked_type(
    query: str, sentence: str, matches: bool
) -> None:
    key_terms = content_terms(query) - TYPE_TERMS
    assert typed_match(query, key_terms, sentence, content_terms(sentence)) is matches


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("What is the default log level of the client?", AnswerKind.VALUE),
        ("maximum upload size?", AnswerKind.VALUE),
        ("حداکثر حجم فایل چقدر است؟", AnswerKind.VALUE),
        ("Which option makes the tool print the URLs only?", AnswerKind.NAME),
        ("What are the arguments of parse_buffer?", AnswerKind.NAME),
        ("نام فایل تنظیمات چیست؟", AnswerKind.NAME),
        ("Which command lists the installed packages?", AnswerKind.COMMAND),
        ("How do I reset my password?", AnswerKind.PROCEDURE),
        ("چگونه چند فایل را هم‌زمان بارگذاری کنم؟", AnswerKind.PROCEDURE),
        ("What is a virtual host?", AnswerKind.DEFINITION),
        ("شبکه خصوصی مجازی چیست؟", AnswerKind.DEFINITION),
        ("Can contractors book their own hotels?", AnswerKind.YES_NO),
        ("آیا پیمانکاران می‌توانند هتل رزرو کنند؟", AnswerKind.YES_NO),
        ("What is the difference between a hard link and a symlink?", AnswerKind.COMPARISON),
        ("تفاوت مرخصی استحقاقی و استعلاجی چیست؟", AnswerKind.COMPARISON),
        ("Who approves leave requests?", AnswerKind.PERSON),
        ("When must claims be submitted?", AnswerKind.DATE),
        ("Tell me about the travel desk", None),
    ],
)
def test_the_kind_of_answer_a_question_wants(query: str, kind: AnswerKind | None) -> None:
    assert answer_kind(query) is kind


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("The default is INFO.", AnswerKind.VALUE, True),
        ("It defaults to 30 seconds.", AnswerKind.VALUE, True),
        ("The level says how much is logged.", AnswerKind.VALUE, False),
        ("Use the --print-uris option.", AnswerKind.NAME, True),
        ("The state is kept in /var/lib/tool/status.", AnswerKind.NAME, True),
        ("The state is kept on the disk.", AnswerKind.NAME, False),
        ("$ tool list --installed", AnswerKind.COMMAND, True),
        ("The tool lists what is installed.", AnswerKind.COMMAND, False),
        (
            "A virtual host is a site served beside others by one server.",
            AnswerKind.DEFINITION,
            True,
        ),
        ("A hard link is cheaper than a symlink.", AnswerKind.COMPARISON, True),
    ],
)
def test_a_sentence_states_the_asked_kind(text: str, kind: AnswerKind, expected: bool) -> None:
    assert states_kind(text, kind, query="What is it?") is expected
