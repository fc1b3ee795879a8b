"""Writing the extractive answer: numbered steps, comparison tables, refusals (paragraphs and
lists: shaping.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.candidates import Scored
from apps.answers.composing.structure import STEP
from apps.answers.retrieval.types import ContextWindow

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
# A comparison with evidence for one side only is answered in prose, and says which side.
SIDE_UNDESCRIBED = {
    "en": "The documents do not describe {side}.",
    "fa": "اسناد درباره‌ی {side} چیزی نمی‌گویند.",
}


def cite(text: str, alias: str) -> str:
    """`Refunds take 30 days [c1].`: the marker goes before the final full stop."""
    end = _FINAL_PUNCTUATION.search(text)
    if end is None:
        return f"{text} [{alias}]"
    return f"{text[: end.start()].rstrip()} [{alias}]{end.group()}"


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word and never inside brackets or quotes: an
    opened "(" left without its ")" reads as a mangled sentence, so the cut goes before it."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    opener = _unclosed(cut)
    if opener > limit // 2:
        cut = cut[:opener].rstrip(" ,;:")
    return f"{cut}…"


_CLOSING = {"(": ")", "[": "]", "“": "”", "«": "»"}


def _unclosed(text: str) -> int:
    """Where the outermost bracket or quote still open at the end of the text opens; -1."""
    stack: list[tuple[str, int]] = []
    for i, char in enumerate(text):
        if char in _CLOSING:
            stack.append((char, i))
        elif stack and char == _CLOSING[stack[-1][0]]:
            stack.pop()
    return stack[0][1] if stack else -1


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


def side_undescribed(side: str, language: str) -> str:
    return SIDE_UNDESCRIBED.get(language, SIDE_UNDESCRIBED["en"]).format(side=side)


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
