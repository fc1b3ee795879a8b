"""Offline multi-hop: the bridge entity of the first hop, and the query for the next hop.

A two-hop question names one thing and asks about another that only the first passage names:
"What is the seat of the county where Van Hook Township is located?" is answered by a passage
on Van Hook Township (which names Mountrail County) and one on Mountrail County (which names
Stanley). The second passage shares almost no words with the question, so searching the
question again, or adding the first passage's most frequent words to it, does not reach it.

Without a chat model the bridge is read from the first hop's best passages: their titles and
the capitalised names in the sentences that match the question, leaving out names the question
already holds. The next hop searches each bridge with the question's terms that its source
passage did not hold (the first hop used the others): "Mountrail County seat".

Text without capitals (Persian) has no names to read this way; it falls back to feedback terms
(`expansion.feedback_query`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from apps.answers.retrieval.expansion import STOP_WORDS
from apps.answers.retrieval.types import Bridge, RetrievedChunk
from apps.corpus.text import split_sentences, words

# A run of capitalised words, allowing the short lower-case joiners names carry inside them.
_NAME = re.compile(
    r"(?:[A-Z][\w'’.\-]*|\d{3,4})"
    r"(?:\s+(?:(?:of|the|de|da|del|der|van|von|la|le|and|&|on|upon|du)\s+)*"
    r"(?:[A-Z][\w'’.\-]*|\d{1,4}))*"
)
# Capitalised only because they start a sentence or are generic: never a bridge by themselves.
_NOT_NAMES = frozenset(
    {"the", "a", "an", "it", "in", "on", "he", "she", "they", "this", "that", "these", "his",
     "her", "its", "as", "at", "after", "before", "during", "from", "for", "with", "by", "when",
     "while", "there", "however", "also", "although", "born", "i", "one", "two", "some",
     "january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december", "sometime", "today"}
)  # fmt: skip
PASSAGES_READ = 3  # the first hop's best passages the bridge is read from


def bridges_find(*, query: str, found: Sequence[RetrievedChunk], limit: int = 2) -> list[Bridge]:
    """The most likely bridges, best first: names in the first hop's best passages that the
    question does not hold, scored by the passage's rank and how well their sentence matches
    the question."""
    asked = _terms(query)
    best: dict[str, tuple[float, Bridge]] = {}
    for rank, chunk in enumerate(found[:PASSAGES_READ]):
        remaining = " ".join(t for t in _ordered_terms(query) if t not in _terms(chunk.text))
        for name, weight in _names(chunk, asked):
            score = weight / (1 + rank)
            key = name.casefold()
            if key not in best or score > best[key][0]:
                text = f"{name} {remaining}".strip()
                best[key] = (score, Bridge(name, text, chunk.chunk_id))
    ranked = sorted(best.values(), key=lambda pair: -pair[0])
    return [bridge for _, bridge in ranked[:limit]]


def _names(chunk: RetrievedChunk, asked: frozenset[str]) -> Iterable[tuple[str, float]]:
    """(name, weight): the title, and each name of a sentence by that sentence's overlap with
    the question (a name beside the question's own words is the likelier bridge)."""
    title = (chunk.title or "").strip()
    if title and _new(title, asked):
        yield title, 1.0
    for sentence in split_sentences(chunk.text):
        overlap = len(_terms(sentence) & asked) / (len(asked) or 1)
        for match in _NAME.finditer(sentence):
            name = match.group(0).strip(" .,'’-")
            if _new(name, asked) and overlap > 0:
                # A full name ("Ernst Mach") is likelier the bridge than a lone word ("Austrian").
                yield name, (0.5 + overlap) * (1 + 0.25 * min(len(words(name)) - 1, 2))


def _new(name: str, asked: frozenset[str]) -> bool:
    """A name the question does not already hold, and not a sentence-initial common word."""
    content = [t for t in _ordered_terms(name) if t not in _NOT_NAMES and not t.isdigit()]
    return bool(content) and not set(content) <= asked


def _ordered_terms(text: str) -> list[str]:
    tokens = (w.casefold() for w in words(text))
    return list(dict.fromkeys(t for t in tokens if t not in STOP_WORDS and len(t) > 2))


def _terms(text: str) -> frozenset[str]:
    return frozenset(_ordered_terms(text))
