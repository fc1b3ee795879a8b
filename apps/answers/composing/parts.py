"""The parts of a question that asks for several things, and a plain sentence for those the
answer leaves out.

"What is the default timeout and the maximum?" asks for two things. When the chosen sentences
state the default but nothing names a maximum, the answer says so in a sentence made of the
question's own words: "The documents do not give the maximum." Only questions that ask for
things are read this way ("what is/are X and Y", «X و Y چیست»), and only when every part is a
short noun phrase: a part with a verb or a question word in it ("What is rsync and how does it
work?") is a second question, not a part, and nothing is said.

A part is answered when a chosen sentence holds one of its own terms (those the other parts do
not share): "timeout" is shared by "the default timeout" and "the maximum" in the reader's
mind, but only written in the first, so a sentence about the maximum timeout answers both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.candidates import Scored
from apps.answers.composing.sides import holds_clause
from apps.answers.composing.terms import content_terms, word_set
from apps.corpus.text import normalise_text

MAX_PARTS = 4
MAX_PART_WORDS = 6
_ASKS_FOR = re.compile(
    r"^(?:what|which)(?:'s|\s+(?:is|are|was|were))\s+(?P<rest>.+)$"
    r"|^(?P<fa>.+?)\s+(?:چیست|چیستند|چه\s+است|چه\s+هستند|کدام\s+است|کدامند|چقدر\s+است)$",
    re.IGNORECASE,
)
_JOINS = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|as well as)\s+|\s+و\s+|\s*،\s*", re.IGNORECASE)
_COMPARING = word_set("difference differences between compare versus vs تفاوت فرق بین میان مقایسه")
MISSING_PART_TEXT = {
    "en": ("The documents do not give {parts}.", " or "),
    "fa": ("اسناد {parts} را نمی‌گویند.", " و "),
}


def asked_parts(query: str) -> tuple[str, ...]:
    """The things a question asks for, as written, when it asks for two or more; else ()."""
    text = normalise_text(query).strip(" ?؟.!")
    asked = _ASKS_FOR.match(text)
    if asked is None:
        return ()
    rest = asked.group("rest") or asked.group("fa")
    parts = tuple(p.strip() for p in _JOINS.split(rest) if p.strip())
    if not 2 <= len(parts) <= MAX_PARTS or _COMPARING & {w.casefold() for w in rest.split()}:
        return ()
    if any(len(p.split()) > MAX_PART_WORDS or holds_clause(p.split()) for p in parts):
        return ()
    return parts


def unanswered_parts(query: str, chosen: Sequence[Scored]) -> tuple[str, ...]:
    """The parts no chosen sentence names, when at least one part is answered."""
    parts = asked_parts(query)
    terms = [content_terms(p) for p in parts]
    said = frozenset().union(*(s.sentence.terms for s in chosen))
    own = [
        t - frozenset().union(*(o for j, o in enumerate(terms) if j != i))
        for i, t in enumerate(terms)
    ]
    if not all(own):
        return ()  # a part with no words of its own cannot be told apart from the others
    missing = tuple(p for p, mine in zip(parts, own, strict=True) if not mine & said)
    return missing if len(missing) < len(parts) else ()


def missing_parts_text(parts: Sequence[str], language: str) -> str:
    template, joiner = MISSING_PART_TEXT.get(language, MISSING_PART_TEXT["en"])
    return template.format(parts=joiner.join(parts))
