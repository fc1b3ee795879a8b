"""Answer-string metrics in the SQuAD style, for English and Persian.

Both sides are normalised the same way (Persian letter forms and digits unified, case folded,
punctuation and English articles dropped, a zero-width non-joiner read as a space) and then
compared as word sequences, so a short gold answer such as "no" never matches inside "not".
A refusal is not an answer: its text (which may list the closest document titles) is never
scored as containing the gold answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from apps.corpus.text import ZWNJ, normalise_text

_PUNCTUATION = re.compile(r"[^\w\s]|_", re.UNICODE)
_ARTICLES = frozenset({"a", "an", "the"})


def answer_tokens(text: str) -> list[str]:
    folded = normalise_text(text).replace(ZWNJ, " ").casefold()
    return [t for t in _PUNCTUATION.sub(" ", folded).split() if t not in _ARTICLES]


def exact_match(prediction: str, golds: Sequence[str]) -> bool:
    predicted = answer_tokens(prediction)
    return any(predicted == answer_tokens(g) for g in golds if answer_tokens(g))


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """The best F1 of word overlap against any gold answer (0 without golds)."""
    predicted = answer_tokens(prediction)
    return max((_f1(predicted, answer_tokens(g)) for g in golds), default=0.0)


def _f1(predicted: list[str], gold: list[str]) -> float:
    common = sum((Counter(predicted) & Counter(gold)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def contains_answer(text: str, golds: Sequence[str]) -> bool:
    """Some gold answer occurs in `text` as a whole run of words."""
    haystack = answer_tokens(text)
    return any(_contains(haystack, answer_tokens(g)) for g in golds)


def _contains(haystack: list[str], needle: list[str]) -> bool:
    if not needle:
        return False
    width = len(needle)
    return any(haystack[i : i + width] == needle for i in range(len(haystack) - width + 1))


def answer_string_found(text: str, answers: Sequence[str]) -> bool:
    """Some answer occurs in `text` as written, ignoring case and runs of whitespace (the
    real-documents sets: "--print-uris" must stay a flag, "/etc/modules" a path)."""
    haystack = _folded(text)
    return any(needle in haystack for needle in map(_folded, answers) if needle)


def _folded(text: str) -> str:
    # A typographic apostrophe in the document matches the one typed in the questions file.
    folded = normalise_text(text).replace(ZWNJ, " ").replace("\u2019", "'").casefold()
    return " ".join(folded.split())
