"""The two things a comparison question compares, named as noun phrases, or None.

"X vs Y", "X versus Y", "X or Y", "difference between X and Y", "compare X and Y", "X compared
to Y", "X differ from Y", «تفاوت X و Y», «مقایسه X با Y», «X یا Y». The sides become the rows
of the answer's table, so they must read as what is compared, not as cut pieces of the
question:
  - a side ends at its clause: "I18N vs L10N, what's the difference?" compares "L10N", and
    "sudoers_audit or sudoers_policy: which one ..." ends at the colon;
  - context after the last side is not part of it: "anonymous set vs named set in nftables"
    ("in nftables" is where both are), unless the first side has the same preposition;
  - words the two sides share are given to both: "dists-style vs flat repositories" compares
    "dists-style repositories" and "flat repositories", "git pull with merge vs with rebase"
    "git pull with merge" and "git pull with rebase", "protocol 0.1 vs 0.2" "protocol 0.2";
  - a side that still holds a question word or a verb was not parsed cleanly ("If I restrict
    both ..., does the job need both to match or just one?"): no sides, the answer is prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.terms import content_terms, word_set
from apps.corpus.text import ZWNJ, normalise_text

_SIDE_PATTERNS = (
    re.compile(
        r"(?:difference|differences|compare|comparing|comparison)\s+(?:between\s+|of\s+)?"
        r"(?P<a>.+?)\s+(?:and|with|to|vs\.?|versus)\s+(?P<b>.+)",
        re.IGNORECASE,
    ),
    re.compile(r"(?P<a>.+?)\s+(?:vs\.?|versus|compared\s+(?:to|with))\s+(?P<b>.+)", re.IGNORECASE),
    re.compile(r"(?P<a>.+?)\s+differs?\s+from\s+(?P<b>.+)", re.IGNORECASE),
    re.compile(r"(?:تفاوت|فرق|مقایسه)(?:\s+(?:بین|میان))?\s+(?P<a>.+?)\s+(?:و|با)\s+(?P<b>.+)"),
    re.compile(r"(?P<a>.+?)\s+(?:or|یا)\s+(?P<b>.+)", re.IGNORECASE),
)
# Where one clause of the question ends and the next begins.
_CLAUSE_BREAK = re.compile(r"\s*(?:[,;:،؛()\[\]]|\s[-–—]\s|\?|؟)\s*")
_SIDE_EDGE_WORDS = word_set(
    """what which is are the a an should i we you use choose pick between better do does
    how to of best چیست چیه است هست کدام بهتر کدوم بین"""
)
_DETERMINERS = word_set("the a an this that these those my our your its their")
# A side holding one of these is a clause, not a thing: the question was not parsed cleanly.
_CLAUSE_WORDS = word_set(
    """what which who whom whose why how when where whether if is are was were be been being
    do does did can could should would will shall may might must need needs have has had
    get gets make makes mean means work works happen happens prefer i we you they he she it
    چه چرا چگونه چطور کدام کجا کی آیا است هست نیست بود شود کند دارد چیست اگر"""
)
_CONTEXT = re.compile(r"\s+(?:in|on|under|within|inside|for|در)\s+\S.*$", re.IGNORECASE)
_LOWER_LATIN = re.compile(r"^[a-z][a-z0-9\-]*$")


def comparison_sides(query: str) -> tuple[str, str] | None:
    """The two compared things, or None when the question does not name them cleanly."""
    text = normalise_text(query).strip(" ?؟.!")
    for pattern in _SIDE_PATTERNS:
        match = pattern.search(text)
        if match:
            sides = _sides(match.group("a"), match.group("b"))
            if sides:
                return sides
    return None


def _sides(a: str, b: str) -> tuple[str, str] | None:
    first = _trim(_CLAUSE_BREAK.split(a)[-1]).split()
    raw_second = _CLAUSE_BREAK.split(b)[0]
    second = _trim(_without_context(raw_second, a)).split()
    if not first or not second or holds_clause(first) or holds_clause(second):
        return None
    determined = raw_second.split()[0].casefold() in _DETERMINERS
    first, second = _shared_words(first, second, determined=determined)
    x, y = " ".join(first), " ".join(second)
    if content_terms(x) - content_terms(y) and content_terms(y) - content_terms(x):
        return x, y
    return None


def _trim(side: str) -> str:
    tokens = side.strip(" ?؟.!,،").split()
    while tokens and tokens[0].casefold() in _SIDE_EDGE_WORDS:
        tokens.pop(0)
    while tokens and tokens[-1].casefold() in _SIDE_EDGE_WORDS:
        tokens.pop()
    return " ".join(tokens)


def _without_context(side: str, other: str) -> str:
    """The side without a closing "in X" that sets the scene for both sides."""
    context = _CONTEXT.search(side)
    if context is None:
        return side
    preposition = context.group().split()[0].casefold()
    if preposition in (w.casefold() for w in other.split()):
        return side  # "files in /etc vs files in /lib": the phrase is part of each side
    return side[: context.start()]


def holds_clause(tokens: Sequence[str]) -> bool:
    """A question word or a verb among the tokens: a clause, not the name of a thing."""
    return any(
        t.casefold() in _CLAUSE_WORDS or t.startswith(("می" + ZWNJ, "نمی" + ZWNJ)) for t in tokens
    )


def _shared_words(
    first: list[str], second: list[str], *, determined: bool
) -> tuple[list[str], list[str]]:
    """Each side with the words the question wrote once for both."""
    lead = second[0].casefold()
    folded = [t.casefold() for t in first]
    if lead in folded[1:]:  # "git pull with merge vs with rebase"
        return first, first[: folded.index(lead, 1)] + second
    if len(second) == 1 and len(first) > 1 and _parallel(first[-1], second[0]):
        return first, first[:-1] + second  # "protocol 0.1 vs 0.2"
    tail = second[1:]
    # "dists-style vs flat repositories": the head noun closes the phrase in English, so a
    # lone first side of the same kind as the second's modifier takes the second's head; not
    # after "the", which opens a phrase of its own, nor "VPN vs remote desktop".
    if (
        len(first) == 1
        and tail
        and not determined
        and _shape(first[0]) == _shape(second[0])
        and all(_LOWER_LATIN.match(t) for t in tail)
    ):
        return first + tail, second
    return first, second


def _shape(word: str) -> str:
    if "/" in word:
        return "path"
    if any(c.isdigit() for c in word):
        return "number"
    if word.isupper():
        return "acronym"
    return "name" if word[:1].isupper() else "word"


def _parallel(a: str, b: str) -> bool:
    """Two words of one kind: both numbers or versions, or one the other with a mark ("src/")."""
    if any(c.isdigit() for c in a) and any(c.isdigit() for c in b):
        return True
    return a.rstrip("/") == b.rstrip("/")
