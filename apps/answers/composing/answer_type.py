"""Questions that ask for a quantity, and whether a sentence states one.

The one answer type that text shows without a language model: a quantity (how many, how
much, how old, which year or century, the how-manieth). A sentence answers such a
question only if it states a number the question does not already hold; when no
chosen sentence does, the documents do not give the figure, however close they are
to the topic. "When" is left out: "after the war" answers it without a number.

Measured on PersianQA (never tuned on): 63 answerable questions asked for a number and
the old composer's chosen sentences stated one for 61; 51 unanswerable ones did, and
for 16 of them no chosen sentence stated a number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
