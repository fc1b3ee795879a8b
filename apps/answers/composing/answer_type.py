"""Questions that ask for a quantity, and whether a sentence states one.

The one answer type that text shows without a language model: a quantity (how many, how
much, how old, which year or century, the how-manieth). A sentence answers such a
question only if it states a number the question does not already hold; when no
chosen sentence does, the documents do not give the figure, however close they are
to the topic. "When" is left out: "after the war" answers it without a number.

Measured on PersianQA (never tuned on): 63 answerable questions asked for a number and
the old composer's chosen sentences stated one for 61; 51 unanswerable ones did, and
for 16 of them no chosen sentence stated a number.

The expected answer type, wider than that check: a number also for "what is the per diem /
rate / fee ...", a date for "when", a name for "who" (English only: a name is told by its
capital letter). It only ever adds evidence (`typed_match`): a sentence that holds every
key term of the question and an answer of the asked type answers it, even when its
wording is far from the question's ("per diem" / "60 euros a day").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

from apps.answers.composing.terms import content_terms, word_set
from apps.corpus.text import normalise_text, words

_QUANTITY_QUESTION = re.compile(
    r"\b(?:how\s+(?:many|much|old|long\s+ago)|(?:what|which)\s+(?:year|century|decade)"
    r"|in\s+(?:what|which)\s+year)\b"
    r"|(?:^|\s)(?:چند|چندتا|چندمین|چندم|چه\s+تعداد|چه\s+مقدار|چقدر|چه\s+سال|چه\s+سالی"
    r"|چه\s+قرن|چه\s+قرنی|چه\s+دهه|چه\s+دهه‌ای|چه\s+تاریخی)(?=\s|$|[?؟])",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")  # normalise_text has already turned Persian digits into ASCII
_NUMBER_WORDS = frozenset(
    # "one"/"یک" double as "a", "نه" as "no" and "second" as a unit: left out.
    [
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "dozen",
        "first",
        "third",
        "fourth",
        "fifth",
        "once",
        "twice",
        "دو",
        "سه",
        "چهار",
        "پنج",
        "شش",
        "هفت",
        "هشت",
        "ده",
        "یازده",
        "دوازده",
        "سیزده",
        "چهارده",
        "پانزده",
        "شانزده",
        "هفده",
        "هجده",
        "نوزده",
        "بیست",
        "سی",
        "چهل",
        "پنجاه",
        "شصت",
        "هفتاد",
        "هشتاد",
        "نود",
        "صد",
        "دویست",
        "سیصد",
        "چهارصد",
        "پانصد",
        "هزار",
        "میلیون",
        "میلیارد",
        "نخستین",
        "اولین",
        "دومین",
        "سومین",
        "چهارمین",
        "پنجمین",
    ]
)


def asks_for_quantity(query: str) -> bool:
    return bool(_QUANTITY_QUESTION.search(normalise_text(query)))


def states_quantity(text: str, *, query: str) -> bool:
    """The sentence holds a number that the question does not already hold."""
    asked = set(_number_tokens(query))
    return any(token not in asked for token in _number_tokens(text))


def quantity_unstated(query: str, sentences: Iterable[str]) -> bool:
    """The question asks for a quantity and none of the sentences states one."""
    return asks_for_quantity(query) and not any(states_quantity(s, query=query) for s in sentences)


def _number_tokens(text: str) -> list[str]:
    return [
        token
        for token in words(normalise_text(text).lower())
        if _DIGIT.search(token) or token in _NUMBER_WORDS
    ]


class AnswerType(StrEnum):
    NUMBER = "number"
    DATE = "date"
    NAME = "name"


# Nouns that name a figure: "what is the per diem / the fee / the limit for ...". Persian
# asks for a figure with چقدر / چه مقدار, which the quantity pattern above already reads.
_AMOUNT_NOUNS_EN = """allowance rate fee fees price cost costs salary wage budget limit amount total
    percentage capacity population size length height weight age duration distance deadline
    interest discount refund reimbursement compensation stipend bonus tax"""
_AMOUNT_NOUNS_FA = "مبلغ هزینه قیمت حقوق دستمزد نرخ سقف سهمیه جمعیت طول ارتفاع وزن سن فاصله مدت"
_AMOUNT_QUESTION = re.compile(
    r"\b(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+(?:the\s+)?(?:\w+\s+)?"
    rf"(?:per\s+diem|{'|'.join(_AMOUNT_NOUNS_EN.split())})\b",
    re.IGNORECASE,
)
_DATE_QUESTION = re.compile(
    r"\b(?:when|what\s+(?:date|day|month|time))\b|(?:^|\s)(?:چه\s+زمانی|چه\s+روزی|چه\s+ماهی)",
    re.IGNORECASE,
)
_NAME_QUESTION = re.compile(r"^\s*(?:who|whom|whose)\b", re.IGNORECASE)
_MONTHS = word_set(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    فروردین اردیبهشت خرداد تیر مرداد شهریور مهر آبان آذر دی بهمن اسفند ژانویه فوریه مارس
    آوریل مه ژوئن ژوئیه اوت سپتامبر اکتبر نوامبر دسامبر"""
)
_CAPITALISED = re.compile(r"(?<=[\w,;:)] )[A-Z][\w'-]+")
# The words that name the asked type are not key terms: the answer replaces them.
TYPE_TERMS = content_terms(
    f"per diem daily {_AMOUNT_NOUNS_EN} {_AMOUNT_NOUNS_FA} date day month time year"
)


def expected_answer_type(query: str) -> AnswerType | None:
    text = normalise_text(query)
    if asks_for_quantity(text) or _AMOUNT_QUESTION.search(text):
        return AnswerType.NUMBER
    if _DATE_QUESTION.search(text):
        return AnswerType.DATE
    if _NAME_QUESTION.search(text):
        return AnswerType.NAME
    return None


def states_answer_type(text: str, kind: AnswerType, *, query: str) -> bool:
    """The sentence holds an answer of the asked type that the question does not already."""
    if kind is AnswerType.NUMBER:
        return states_quantity(text, query=query)
    if kind is AnswerType.DATE:
        asked = set(words(normalise_text(query).lower()))
        tokens = [t for t in words(normalise_text(text).lower()) if t not in asked]
        return any(_DIGIT.search(t) or t in _MONTHS for t in tokens)
    asked_words = set(words(query.lower()))
    return any(m.lower() not in asked_words for m in _CAPITALISED.findall(text))


def typed_match(
    query: str, key_terms: frozenset[str], sentence: str, terms: frozenset[str]
) -> bool:
    """The sentence holds every key term of the question and an answer of the asked type."""
    kind = expected_answer_type(query)
    if kind is None or not key_terms or not key_terms <= terms:
        return False
    return states_answer_type(sentence, kind, query=query)
