"""Writing the extractive answer: numbered steps, comparison tables, refusals (paragraphs and
lists: shaping.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.sentences import Scored
from apps.answers.composing.structure import STEP
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


def procedure_steps(scored: Sequence[Scored], *, language: str = "") -> list[Scored]:
    """The steps of the procedure that matches, in document order.

    Looked for in the chunks of the three best sentences, those in the user's language
    first; a chunk's numbered list, when it has one, is the procedure, else its step-like
    sentences; at least two steps.
    """
    tops = sorted(scored, key=lambda s: -s.score)[:3]
    ranks = sorted(
        dict.fromkeys(s.sentence.rank for s in tops),
        key=lambda rank: next(
            s.sentence.language != language for s in tops if s.sentence.rank == rank
        ),
    )
    for rank in ranks:
        steps = [s for s in scored if s.sentence.rank == rank and s.sentence.step]
        numbered = [s for s in steps if s.sentence.kind == STEP]
        chosen = numbered if len(numbered) >= 2 else steps
        if len(chosen) >= 2:
            return sorted(chosen, key=lambda s: (s.sentence.line, s.sentence.position))[:MAX_STEPS]
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
