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
from collections.abc import Callable, Iterable
from enum import StrEnum

from apps.answers.composing.measures import asked_measure, states_measure
from apps.answers.composing.terms import content_terms, word_set
from apps.corpus.text import normalise_text, words

_QUANTITY_QUESTION = re.compile(
    r"\b(?:how\s+(?:many|much|old|long\s+ago)|(?:what|which)\s+(?:year|century|decade)"
    r"|in\s+(?:what|which)\s+year)\b"
    r"|(?:^|\s)(?:چندتا|چندمین|چندم|چه\s+تعداد|چه\s+مقدار|چقدر|چه\s+سال|چه\s+سالی"
    r"|چه\s+قرن|چه\s+قرنی|چه\s+دهه|چه\s+دهه‌ای|چه\s+تاریخی)(?=\s|$|[?؟])",
    re.IGNORECASE,
)
# «چند» is "how many" alone or before a measure word or a verb ("چند سال", "چند است؟"), and
# before a noun too when it is the question's only question word ("چند کشور عضو هستند؟");
# before a noun in a question asked with another word it is "several": «چگونه چند فایل را
# هم‌زمان بارگذاری کنم» asks how, not how many.
_CHAND = re.compile(r"(?:^|\s)چند(?:\s+([^\s?؟.!]+)|(?=[\s?؟.!]*$))")
_MEASURE_WORDS = tuple(
    word_set(
        """بار سال ماه هفته روز ساعت دقیقه ثانیه نفر تا عدد درصد برابر مورد متر کیلو گرم تن
        لیتر تومان ریال دلار یورو قرن دهه نسل سانت میلی هکتار"""
    )
)
_FA_VERB_AFTER = re.compile(r"^(?:است|هست|بود|شد|شده|می|نمی|دارد|داشت|بوده)")
_OTHER_FA_QUESTION = re.compile(
    r"(?:^|\s)(?:چگونه|چطور|چطوری|آیا|چرا|کجا|کجاست|کدام|چه|چی|چیست|کیست|کی|به\s+چه)(?=\s|$|[?؟])"
)


def _asks_chand(text: str) -> bool:
    """Does «چند» in the question ask "how many" (not "several")?"""
    for match in _CHAND.finditer(text):
        after = match.group(1)
        if after is None or after.startswith(_MEASURE_WORDS) or _FA_VERB_AFTER.match(after):
            return True
        if not _OTHER_FA_QUESTION.search(text):
            return True
    return False


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
    text = normalise_text(query)
    return bool(_QUANTITY_QUESTION.search(text)) or _asks_chand(text)


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


class AnswerKind(StrEnum):
    """What kind of answer a question wants, wider than the types a sentence can be checked
    for above: the sentence ranker (ranker.py) reads whether a sentence states it."""

    VALUE = "value"  # a number, a default, a size, a limit
    DATE = "date"
    PERSON = "person"
    NAME = "name"  # an option, a file, a variable, a package, a command's name
    COMMAND = "command"  # a command line to run
    PROCEDURE = "procedure"  # steps
    DEFINITION = "definition"
    YES_NO = "yes_no"
    COMPARISON = "comparison"


_KIND_CUES: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            AnswerKind.YES_NO,
            r"^\s*(?:is|are|can|could|does|do|did|should|will|would|was|were|has|have|must)\b"
            r"|^\s*آیا\s",
        ),
        (
            AnswerKind.COMPARISON,
            r"\b(?:differences?\s+between|compared?\s+(?:to|with)|versus|vs\.?|better\s+than)\b"
            r"|(?:^|\s)(?:تفاوت|فرق|مقایسه)(?=\s|$|[?؟])",
        ),
        (
            AnswerKind.COMMAND,
            r"\b(?:which|what)\s+command\b|\bcommand\s+(?:to|for|that|line)\b"
            r"|(?:^|\s)(?:چه\s+دستوری|کدام\s+دستور|دستور\s+\S+\s+چیست|با\s+چه\s+فرمانی)",
        ),
        (
            AnswerKind.VALUE,
            r"\b(?:defaults?|maximum|minimum|max|min|limit|size|timeout|how\s+(?:long|big|large"
            r"|often|far))\b|(?:^|\s)(?:پیش\S?فرض|حداکثر|حداقل|اندازه|سقف)(?=\s|$|[?؟])",
        ),
        (
            AnswerKind.NAME,
            r"\b(?:which|what)(?:'s|\s+is|\s+are)?\s+(?:the\s+)?(?:\w+\s+)?(?:option|flag|switch"
            r"|file|directory|folder|path|variable|package|program|tool|setting|parameter"
            r"|argument|key|field|module|function|service|port|name)s?\b"
            r"|\b(?:arguments|parameters|options|flags)\s+(?:of|for|to)\b|\bcalled\b"
            r"|(?:^|\s)(?:نام|اسم|کدام\s+(?:فایل|گزینه|بسته|متغیر|پوشه|برنامه))(?=\s|$|[?؟])",
        ),
        (AnswerKind.PERSON, r"^\s*(?:who|whom|whose)\b|(?:^|\s)(?:چه\s+کسی|چه\s+کسانی|کیست)"),
        (
            AnswerKind.PROCEDURE,
            r"\bhow\s+(?:do|can|should|to|would)\b|\b(?:steps?|procedure)\s+(?:to|for)\b"
            r"|(?:^|\s)(?:چگونه|چطور|چطوری|مراحل|روش)(?=\s|$|[?؟])",
        ),
        (
            AnswerKind.DEFINITION,
            r"^\s*(?:what\s+(?:is|are)\s+(?:an?\s+)?\S+(?:\s+\S+)?\s*\??$|what\s+does\s+.+\s+mean"
            r"|define\b)|(?:^|\s)(?:چیست|یعنی\s+چه|منظور\s+از)(?=\s|$|[?؟])",
        ),
    )
)


def answer_kind(query: str) -> AnswerKind | None:
    """The kind of answer the question wants, the first cue that matches; None: no cue."""
    text = normalise_text(query)
    if asks_for_quantity(text) or _AMOUNT_QUESTION.search(text):
        return AnswerKind.VALUE
    if _DATE_QUESTION.search(text):
        return AnswerKind.DATE
    return next((kind for kind, cue in _KIND_CUES if cue.search(text)), None)


_DEFAULT_STATED = re.compile(
    r"\bdefaults?\s+(?:\w+\s+){0,3}?(?:is|are|was|to|of|:|=)\s*\S|\bdefault(?:s)?:"
    r"|\b(?:is|are)\s+\S+\s+by\s+default\b|\bby\s+default\b|\b(?:maximum|minimum|limit)\s+is\b"
    r"|\((?:the\s+)?default\)|پیش\S?فرض\s+\S+"  # "yes or no (the default)"
)
_DEFAULT_ASKED = re.compile(r"\bdefaults?\b|(?:^|\s)پیش\S?فرض", re.IGNORECASE)
_NAME_TOKEN = re.compile(
    r"(?:^|[\s(\"'`])(?:--?[A-Za-z][\w-]*|[~.]?/[\w.-]+(?:/[\w.-]*)*|\w+\.[a-z]{1,5}\b"
    r"|[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z]{2,}[A-Z0-9_]*|\w+\(\)|\w+::\w+)|`[^`]+`"
)
_COMMAND_LINE = re.compile(
    r"^\s*(?:[$#]\s*\S|sudo\s)|^[a-z][\w.+-]*(?:\s+\S+)*?\s+--?[A-Za-z]|\S\s+\|\s+\S"
)
_DEFINES = re.compile(
    r"\b(?:is|are)\s+(?:an?|the|one\s+of)\b|\bmeans?\b|\brefers?\s+to\b|\bcalled\b"
    r"|\bdefined\s+as\b|\bstands?\s+for\b|(?:^|\s)(?:یعنی|به\s+معنای|عبارت\s+است\s+از|نوعی)\s"
)
_COMPARES = re.compile(
    r"\b(?:than|whereas|unlike|while|instead\s+of|rather\s+than|both|differs?|same\s+as)\b"
    r"|\S(?:\u200c|\s)?تر\s+از\s|(?:^|\s)(?:برخلاف|در\s+حالی\s+که|اما|ولی)\s"
)


def states_kind(text: str, kind: AnswerKind, *, query: str, step: bool = False) -> bool:
    """The sentence states an answer of the asked kind (not one the question already holds)."""
    if kind is AnswerKind.VALUE:
        return states_quantity(text, query=query) or bool(_DEFAULT_STATED.search(text))
    if kind is AnswerKind.DATE:
        return states_answer_type(text, AnswerType.DATE, query=query)
    if kind is AnswerKind.PERSON:
        return states_answer_type(text, AnswerType.NAME, query=query)
    if kind is AnswerKind.NAME:
        asked = set(words(query.lower()))
        found = (m.group(0).strip(" (\"'`") for m in _NAME_TOKEN.finditer(text))
        return any(token and token.lower() not in asked for token in found)
    if kind is AnswerKind.COMMAND:
        return bool(_COMMAND_LINE.search(text))
    if kind is AnswerKind.PROCEDURE:
        return step or bool(_COMMAND_LINE.search(text))
    if kind is AnswerKind.DEFINITION:
        return bool(_DEFINES.search(text))
    if kind is AnswerKind.COMPARISON:
        return bool(_COMPARES.search(text))
    return False


def stated_answer(query: str) -> Callable[[str], bool] | None:
    """How to tell a sentence that states what the question asks for: the asked measure's
    test (a duration, a size ...), the asked kind's test for a value or a date, a stated
    default for any question about one ("is compression on by default?"); None when the
    question asks for none of these."""
    measure = asked_measure(query)
    if measure is not None:  # "how long": a duration, not any number (measures.py)
        return lambda text: states_measure(text, measure, query=query)
    kind = answer_kind(query)
    if kind is AnswerKind.VALUE or kind is AnswerKind.DATE:
        asked = kind
        return lambda text: states_kind(text, asked, query=query)
    if _DEFAULT_ASKED.search(normalise_text(query)):
        return lambda text: bool(_DEFAULT_STATED.search(text))
    return None
