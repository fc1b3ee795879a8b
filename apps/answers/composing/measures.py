"""Questions that ask for a measure (a duration, a frequency, a size, a time of day, the release
that brought something), and whether sentences state one.

"How long does apt wait for a hook to answer?" is not answered by a sentence that states some
other number ("the protocol version is 0.2"): it needs a number with a unit of time. A number
alone is the weaker test answer_type.py applies to "how many"; a measure's unit is what tells a
sentence that states the asked figure from one that only mentions figures. When no chosen
sentence states the measure asked for, the documents do not give it, however close they are to
the topic, and the composer refuses (extractive.ExtractiveComposer.refusal_reason).

The test reads the chosen sentences together: "The timeout is given in seconds." and "The
default is 30." state a duration between them. Units follow a number written as digits or as a
word ("half a second", "two minutes"), in English and Persian.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

from apps.corpus.text import normalise_text


class Measure(StrEnum):
    DURATION = "duration"
    FREQUENCY = "frequency"
    SIZE = "size"
    TIME_OF_DAY = "time of day"
    RELEASE = "release"


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_STORAGE = (
    r"disks?|discs?|files?|partitions?|images?|caches?|buffers?|memory|ram|logs?|archives?"
    r"|backups?|volumes?|drives?|media|storage|space|swap|filesystems?|downloads?|uploads?"
)
# The first cue that matches decides: "how long ago" asks for a date, which answer_type.py reads.
_ASKED: tuple[tuple[Measure, re.Pattern[str]], ...] = (
    (
        Measure.TIME_OF_DAY,
        _cue(
            r"\b(?:at\s+)?what\s+time\s+(?:of\s+(?:the\s+)?day|does|do|is|will)\b"
            r"|(?:^|\s)(?:چه\s+ساعتی|ساعت\s+چند)(?=\s|$|[?؟])"
        ),
    ),
    (
        Measure.RELEASE,
        _cue(
            r"\b(?:when\s+(?:was|were|did)|(?:which|what)\s+(?:\S+\s+){0,2}?(?:version|release)"
            r"|since\s+which)"
            r"\b.*\b(?:released|introduced|added|appeared|came\s+out|shipped)\b"
            r"|(?:^|\s)(?:از\s+کدام\s+نسخه|در\s+کدام\s+نسخه|چه\s+نسخه‌ای)(?=\s|$|[?؟])"
        ),
    ),
    (
        Measure.FREQUENCY,
        _cue(
            r"\bhow\s+often\b|\bhow\s+frequently\b|(?:^|\s)(?:هر\s+چند\s+وقت|چند\s+وقت\s+یک\s*بار)"
        ),
    ),
    (
        Measure.DURATION,
        _cue(
            r"\b(?:for\s+)?how\s+long\b(?!\s+ago)|\bhow\s+many\s+(?:seconds|minutes|hours|days)\b"
            r"|(?:^|\s)(?:چه\s+مدت|چقدر\s+طول|چه\s+مدتی|تا\s+چه\s+مدت)(?=\s|$|[?؟])"
        ),
    ),
    (
        Measure.SIZE,
        # Of storage only: "how large is the population" asks for a number, not bytes.
        _cue(
            rf"\b(?:how\s+(?:big|large)|what\s+size)\b(?=.*\b(?:{_STORAGE})\b)"
            rf"|\b(?:{_STORAGE})\b.*\b(?:how\s+(?:big|large)|what\s+size)\b"
            r"|\bhow\s+much\s+(?:disk|space|memory|room|storage|ram)\b"
            r"|(?:^|\s)(?:چه\s+حجمی|چقدر\s+(?:فضا|حجم|حافظه))(?=\s|$|[?؟])"
        ),
    ),
)

_NUMBER_WORD = (
    r"(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|thousand|half(?:\s+an?)?|several"
    r"|few|a\s+few|یک|دو|سه|چهار|پنج|شش|هفت|هشت|ده|پانزده|بیست|سی|چهل|پنجاه|شصت|صد|نیم|چند)"
)
_TIME_UNITS = (
    r"(?:milli|micro|nano)?seconds?|secs?|ms|minutes?|mins?|hours?|hrs?|days?|weeks?|months?"
    r"|years?|decades?|centur(?:y|ies)|ثانیه|دقیقه|ساعت|روز|هفته|ماه|سال"
)
_SIZE_UNITS = (
    r"bytes?|[kmgtp]i?b|[kmgt]|(?:kilo|mega|giga|tera|peta)(?:bytes?)|blocks?|sectors?"
    r"|bits?|characters?|chars|octets?|بایت|کیلوبایت|مگابایت|گیگابایت|ترابایت"
)
_DURATION = re.compile(
    rf"(?<!\w)\d+(?:[.,]\d+)*[\s-]*(?:{_TIME_UNITS}|[smhd])(?!\w)"
    rf"|(?<!\w){_NUMBER_WORD}[\s-]+(?:{_TIME_UNITS})(?!\w)"
    r"|\b(?:forever|indefinitely|never\s+expires?)\b",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(?:every|each|per|once|twice|hourly|daily|weekly|monthly|yearly|annually|nightly"
    r"|times\s+an?)\b|(?:^|\s)(?:هر|روزانه|هفتگی|ماهانه|سالانه|بار\s+در)(?=\s|$)",
    re.IGNORECASE,
)
_SIZE = re.compile(rf"(?<!\w)\d+(?:[.,]\d+)*\s*(?:{_SIZE_UNITS})(?!\w)", re.IGNORECASE)
_TIME_OF_DAY = re.compile(
    r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:midnight|noon|o'clock)\b"
    r"|(?:^|\s)(?:نیمه\s*شب|ظهر|بامداد|ساعت\s+\d+)",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")
_VERSION = re.compile(r"\b\d+(?:\.\d+)+[a-z]?\b|\bversion\s+\d+\b", re.IGNORECASE)
_MONTH = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december)\b",
    re.IGNORECASE,
)


def asked_measure(query: str) -> Measure | None:
    """The measure the question asks for, or None."""
    text = normalise_text(query)
    return next((measure for measure, cue in _ASKED if cue.search(text)), None)


def states_measure(text: str, measure: Measure, *, query: str) -> bool:
    """The text states a measure of the asked kind that the question does not already hold."""
    text = normalise_text(text)
    if measure is Measure.DURATION:
        return _new(_DURATION, text, query)
    if measure is Measure.FREQUENCY:
        return bool(_FREQUENCY.search(text)) or _new(_DURATION, text, query)
    if measure is Measure.SIZE:
        return _new(_SIZE, text, query)
    if measure is Measure.TIME_OF_DAY:
        return _new(_TIME_OF_DAY, text, query)
    return any(_new(pattern, text, query) for pattern in (_YEAR, _VERSION, _MONTH))


def measure_unstated(query: str, sentences: Iterable[str]) -> Measure | None:
    """The measure the question asks for when the sentences, read together, state none."""
    measure = asked_measure(query)
    if measure is None:
        return None
    joined = _together(sentences)
    return None if states_measure(joined, measure, query=query) else measure


def _together(sentences: Iterable[str]) -> str:
    """The sentences as one text, so a unit in one and the figure in the next count: "The
    interval is given in seconds. The default is 30." states a duration."""
    texts = list(sentences)
    joined = " ".join(texts)
    units = re.findall(rf"\bin\s+({_TIME_UNITS}|{_SIZE_UNITS})\b", joined, re.IGNORECASE)
    figures = re.findall(r"(?<![\w.])\d+(?:[.,]\d+)?(?!\w|[.,]\d)", joined)
    if units and figures:  # "given in seconds" + "is 30": the figure in that unit
        joined += f" {figures[-1]} {units[0]}"
    return joined


def _new(pattern: re.Pattern[str], text: str, query: str) -> bool:
    asked = {m.group(0).lower() for m in pattern.finditer(normalise_text(query))}
    return any(m.group(0).lower() not in asked for m in pattern.finditer(text))
