"""Filling a comparison: each side's row holds only sentences about that side.

A side is named by its most telling term: of the side's own terms (those the other side
does not share), the one found in the fewest candidate sentences and headings ("sse" in
"SSE streams", not "stream"). An acronym also matches its spelled-out form ("SSE" and
"Server-Sent Events"). A sentence is about a side when its text or its chunk's headings
name it; a sentence that names both sides in its text goes to the one its headings name,
or to neither ("the WebSocket or SSE connection" describes neither), and one in a section
about the other side goes nowhere. Sentences whose text and section agree come first. A side without
evidence keeps an empty cell; the answer is then prose, which says the side is not described
only when no sentence it shows names that side.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.candidates import Scored
from apps.answers.composing.sentences import redundant
from apps.answers.composing.structure import PROSE
from apps.answers.composing.terms import content_terms

_ACRONYM = re.compile(r"^[A-Z]{2,6}s?$")
_WORD_PARTS = re.compile(r"[\s\-‐/]+")


def side_cells(
    sides: tuple[str, str], scored: Sequence[Scored], *, per_side: int = 2
) -> list[list[Scored]]:
    names = [_SideName(side, other, scored) for side, other in (sides, sides[::-1])]
    placed = [(s, *_side_of(s, names)) for s in scored]
    cells: list[list[Scored]] = [[], []]
    # Sentences whose text and section both name the side first, then the best scored.
    for s, side, _agreed in sorted(placed, key=lambda p: (not p[2], -p[0].score)):
        if side is None or s.sentence.text.endswith(":"):
            continue  # about neither side, or announces a list the cell does not hold
        cell = cells[side]
        # One list item per cell: two would be the source's list flattened into a sentence.
        listed = s.sentence.kind != PROSE and any(c.sentence.kind != PROSE for c in cell)
        if len(cell) < per_side and not listed and not redundant(s, cell):
            cell.append(s)
    return [sorted(cell, key=lambda s: (s.sentence.rank, s.sentence.position)) for cell in cells]


def undescribed_side(
    sides: tuple[str, str], cells: Sequence[Sequence[Scored]], shown: Sequence[Scored]
) -> str | None:
    """The side with an empty cell that no shown sentence names either, or None: a sentence
    that names both sides goes to neither cell, yet it does describe both."""
    scored = [s for cell in cells for s in cell] + list(shown)
    for index, cell in enumerate(cells):
        name = _SideName(sides[index], sides[1 - index], scored)
        if not cell and not any(name.named_in(s.sentence.text, s.sentence.terms) for s in shown):
            return sides[index]
    return None


def _side_of(s: Scored, names: Sequence[_SideName]) -> tuple[int | None, bool]:
    """The side the sentence is about, and whether its text and its section agree on it."""
    text = [name.named_in(s.sentence.text, s.sentence.terms) for name in names]
    section = [name.named_in(s.sentence.section, s.sentence.heading_terms) for name in names]
    if text.count(True) == 1:
        side = text.index(True)
        if section.count(True) == 1 and not section[side]:
            return None, False  # a section about the other side, which mentions this one
        return side, section[side]
    if section.count(True) == 1 and (text[section.index(True)] or not any(text)):
        side = section.index(True)
        return side, text[side]
    return None, False


class _SideName:
    def __init__(self, side: str, other: str, scored: Sequence[Scored]) -> None:
        own = content_terms(side) - content_terms(other)
        pools = [s.sentence.terms | s.sentence.heading_terms for s in scored]
        found = {term: sum(term in pool for pool in pools) for term in own}
        present = [term for term in own if found[term]]
        # The rarest term that occurs at all; sorted first so that ties break the same way.
        self.term = min(sorted(present or own), key=lambda t: found[t]) if own else ""
        acronyms = [w for w in side.split() if _ACRONYM.match(w)]
        self.acronym = acronyms[0].rstrip("s").lower() if acronyms else ""

    def named_in(self, text: str, terms: frozenset[str]) -> bool:
        if self.term and self.term in terms:
            return True
        return bool(self.acronym) and _spells(self.acronym, text)


def _spells(acronym: str, text: str) -> bool:
    """ "Server-Sent Events" spells "sse": consecutive capitalised words with those initials."""
    parts = [part.lstrip("([\"'«“") for part in _WORD_PARTS.split(text)]
    parts = [part for part in parts if part]
    size = len(acronym)
    for start in range(len(parts) - size + 1):
        window = parts[start : start + size]
        if all(p[0].isupper() for p in window) and "".join(p[0] for p in window).lower() == acronym:
            return True
    return False
