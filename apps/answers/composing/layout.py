"""Writing the extractive answer: cited paragraphs, numbered steps, comparison tables, refusals."""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.sentences import Scored, redundant
from apps.answers.composing.terms import content_terms, word_set
from apps.answers.retrieval.types import ContextWindow
from apps.corpus.text import normalise_text

MAX_STEPS = 8

_FINAL_PUNCTUATION = re.compile(r"[.!?؟…]+$")
REFUSAL_TEXT = {
    "en": (
        "The documents do not say enough to answer this question.",
        "The closest documents are: ",
    ),
    "fa": ("پاسخ این پرسش در اسناد موجود نیست.", "نزدیک‌ترین اسناد: "),
}
TABLE_HEADER = {"en": "What the documents say", "fa": "آنچه اسناد می‌گویند"}
SIDE_MISSING = {"en": "The documents do not say.", "fa": "اسناد در این باره چیزی نمی‌گویند."}


def cite(text: str, alias: str) -> str:
    """`Refunds take 30 days [c1].`: the marker goes before the final full stop."""
    end = _FINAL_PUNCTUATION.search(text)
    if end is None:
        return f"{text} [{alias}]"
    return f"{text[: end.start()].rstrip()} [{alias}]{end.group()}"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return f"{cut}…"


def paragraph_pieces(chosen: Sequence[Scored], *, max_chars: int) -> list[str]:
    pieces = [cite(clip(s.sentence.text, max_chars), s.sentence.alias) for s in chosen]
    return [piece if i == 0 else f" {piece}" for i, piece in enumerate(pieces)]


def procedure_steps(scored: Sequence[Scored]) -> list[Scored]:
    """The step-like sentences of the best chunk that has at least two, in document order."""
    for top in sorted(scored, key=lambda s: -s.score)[:3]:
        steps = [s for s in scored if s.sentence.rank == top.sentence.rank and s.sentence.step]
        if len(steps) >= 2:
            return sorted(steps, key=lambda s: s.sentence.position)[:MAX_STEPS]
    return []


def procedure_pieces(steps: Sequence[Scored], intro: Scored | None) -> list[str]:
    lines = [
        f"{number}. {cite(s.sentence.text, s.sentence.alias)}"
        for number, s in enumerate(steps, start=1)
    ]
    pieces = [f"{line}\n" for line in lines[:-1]] + lines[-1:]
    if intro is not None:
        pieces.insert(0, cite(intro.sentence.text, intro.sentence.alias) + "\n\n")
    return pieces


_SIDE_PATTERNS = (
    re.compile(
        r"(?:difference|differences|compare|comparing|comparison)\s+(?:between\s+|of\s+)?"
        r"(?P<a>.+?)\s+(?:and|with|to|vs\.?|versus)\s+(?P<b>.+)",
        re.IGNORECASE,
    ),
    re.compile(r"(?P<a>.+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)", re.IGNORECASE),
    re.compile(r"(?:تفاوت|فرق|مقایسه)(?:\s+(?:بین|میان))?\s+(?P<a>.+?)\s+(?:و|با)\s+(?P<b>.+)"),
    re.compile(r"(?P<a>.+?)\s+(?:or|یا)\s+(?P<b>.+)", re.IGNORECASE),
)
_SIDE_EDGE_WORDS = word_set(
    """what which is are the a an should i we you use choose pick between better do does
    how to of best چیست چیه است هست کدام بهتر کدوم بین"""
)


def comparison_sides(query: str) -> tuple[str, str] | None:
    """The two compared things: "X vs Y", "difference between X and Y", "X or Y", "تفاوت X و Y"."""
    text = normalise_text(query).strip(" ?؟.!")
    for pattern in _SIDE_PATTERNS:
        match = pattern.search(text)
        if match:
            a, b = _trim_side(match.group("a")), _trim_side(match.group("b"))
            if (
                a
                and b
                and content_terms(a) - content_terms(b)
                and content_terms(b) - content_terms(a)
            ):
                return a, b
    return None


def _trim_side(side: str) -> str:
    tokens = side.strip(" ?؟.!,،").split()
    while tokens and tokens[0].lower() in _SIDE_EDGE_WORDS:
        tokens.pop(0)
    while tokens and tokens[-1].lower() in _SIDE_EDGE_WORDS:
        tokens.pop()
    return " ".join(tokens)


def side_cells(
    sides: tuple[str, str], scored: Sequence[Scored], *, per_side: int = 2
) -> list[list[Scored]]:
    """Each sentence goes to the side whose distinctive terms it covers best (ties: the first)."""
    a, b = content_terms(sides[0]), content_terms(sides[1])
    distinctive = (a - b, b - a)
    cells: list[list[Scored]] = [[], []]
    for s in sorted(scored, key=lambda s: -s.score):
        shares = [len(s.sentence.terms & terms) / len(terms) for terms in distinctive]
        side = 0 if shares[0] >= shares[1] else 1
        if shares[side] > 0 and len(cells[side]) < per_side and not redundant(s, cells[side]):
            cells[side].append(s)
    return [sorted(cell, key=lambda s: (s.sentence.rank, s.sentence.position)) for cell in cells]


def table_pieces(
    sides: tuple[str, str], cells: Sequence[Sequence[Scored]], language: str
) -> list[str]:
    lang = language if language in TABLE_HEADER else "en"
    pieces = [f"| | {TABLE_HEADER[lang]} |\n", "|---|---|\n"]
    for number, (side, cell) in enumerate(zip(sides, cells, strict=True)):
        body = " ".join(cite(s.sentence.text, s.sentence.alias) for s in cell) or SIDE_MISSING[lang]
        row = f"| **{_cell(side)}** | {_cell(body)} |"
        pieces.append(row if number == len(sides) - 1 else f"{row}\n")
    return pieces


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def closest_titles(context: ContextWindow, *, limit: int = 3) -> list[str]:
    titles = (c.chunk.display_title for c in context.chunks)
    return list(dict.fromkeys(t for t in titles if t))[:limit]


def refusal_pieces(language: str, titles: Sequence[str]) -> list[str]:
    lang = language if language in REFUSAL_TEXT else "en"
    statement, closest = REFUSAL_TEXT[lang]
    if not titles:
        return [statement]
    separator = "، " if lang == "fa" else "; "
    return [statement, f" {closest}{separator.join(titles)}."]
