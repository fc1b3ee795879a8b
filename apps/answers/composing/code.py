"""Code in an answer: a command, a configuration or an example is quoted whole, as written.

A code block of the source (structure.py's CODE line) is one unit: never cut into sentences,
never stripped of its markup, written as a fenced block so the chat renders it as code. It
goes with the sentence that introduces it ("An nginx example for two web processes:"), which
carries its citation; a block without one is cited on the line after it.

When the question asks for code (a command, an example, a configuration, a syntax, "how do I
run ..."; `asks_for_code`), the answer is the strongest block with its introduction: the block
itself is the answer, sentences about it would only paraphrase it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.candidates import Scored
from apps.answers.composing.sentences import RELATIVE_FLOOR
from apps.answers.composing.structure import CODE
from apps.corpus.text import fenced, normalise_text

# What asks for code, in English and Persian: the thing (a command, an example, a
# configuration, a syntax, a script) or the act ("how do I run / write / type ...").
_ASKS_FOR_CODE = re.compile(
    r"\b(?:commands?|command[- ]line|example|examples|sample|snippet|config|configuration|"
    r"configure|syntax|script|invocation|one-liner)\b"
    r"|\bhow\s+(?:do|can|should|would)\s+(?:i|we|you|one)\s+(?:run|write|type|invoke|call|"
    r"execute|configure|set\s+up)\b"
    r"|\bwhat\s+(?:do\s+i|should\s+i|to)\s+(?:type|run|write)\b"
    r"|دستور|فرمان|مثال|نمونه|پیکربندی|کانفیگ|نحو|سینتکس|اسکریپت|(?:^|\s)کد(?:\s|$)"
    r"|اجرا\s*(?:کنم|کنیم|می‌کنم|کرد)|بنویسم|بنویسیم|تایپ\s*کنم",
    re.IGNORECASE,
)


# What asks what a thing does or means: the sentence saying so answers it, not the code it is
# written in, even when the question names that code ("what does sharedscripts do in a
# logrotate config?", "what are flowtables for?", "what is -P in rsync?").
_ASKS_WHAT_IT_DOES = re.compile(
    r"\bwhat\s+(?:does|do)\s+.+?\s+(?:do|mean)\b|\bwhat\s+(?:is|are)\s+.+?\s+(?:used\s+)?for"
    r"\s*\??$|\bwhat\s+is\s+the\s+(?:purpose|meaning|point)\s+of\b|\bwhat(?:'s|\s+is|\s+are)\s+--?\w"
    r"|(?:^|\s)(?:چه\s+کاری|یعنی\s+چه|به\s+چه\s+معنا|برای\s+چیست|کاربرد)(?=\s|$|[?؟])",
    re.IGNORECASE,
)


def asks_for_code(query: str) -> bool:
    """The question asks for a command, an example, a configuration or a syntax, not for what
    one of them does."""
    text = normalise_text(query)
    return bool(_ASKS_FOR_CODE.search(text)) and not asks_what_it_does(text)


def asks_what_it_does(query: str) -> bool:
    """The question asks what a thing does, means or is for: prose answers it, not code."""
    return bool(_ASKS_WHAT_IT_DOES.search(normalise_text(query)))


def intro_of(code: Scored, scored: Sequence[Scored]) -> Scored | None:
    """The sentence that announces the block: the prose line right before it, ending in ":"."""
    return next(
        (
            s
            for s in scored
            if s.sentence.rank == code.sentence.rank
            and s.sentence.line == code.sentence.line - 1
            and s.sentence.intro
        ),
        None,
    )


def code_after(intro: Scored, scored: Sequence[Scored]) -> Scored | None:
    """The code block an announcing sentence introduces, if the next line is one."""
    return next(
        (
            s
            for s in scored
            if s.sentence.rank == intro.sentence.rank
            and s.sentence.line == intro.sentence.line + 1
            and s.sentence.kind == CODE
        ),
        None,
    )


def code_pieces(scored: Sequence[Scored]) -> list[str]:
    """The strongest block with its introduction, or [] when no block is strong enough.

    A block is as strong as the better of itself and its introduction (a configuration's own
    words rarely match the question; the sentence announcing it does), and must reach the
    share of the best sentence that any further sentence of an answer must.
    """
    codes = [s for s in scored if s.sentence.kind == CODE]
    if not codes:
        return []
    best = max(s.score for s in scored)
    strength = {
        id(c): max([c.score] + [i.score for i in [intro_of(c, scored)] if i]) for c in codes
    }
    chosen = max(codes, key=lambda c: (strength[id(c)], -c.sentence.rank))
    if strength[id(chosen)] < RELATIVE_FLOOR * best:
        return []
    intro = intro_of(chosen, scored)
    return quoted_pieces(chosen, intro)


def quoted_pieces(code: Scored, intro: Scored | None) -> list[str]:
    """ "An nginx example [c1]:" and the fenced block; without an intro, the block then its marker."""
    block = fenced(code.sentence.quoted or code.sentence.text)
    if intro is None:
        return [block, f"\n[{code.sentence.alias}]"]
    return [cite_intro(intro.sentence.text, intro.sentence.alias), f"\n\n{block}"]


def cite_intro(text: str, alias: str) -> str:
    """ "An example for two processes:" -> "An example for two processes [c1]:"."""
    if text.endswith(":"):
        return f"{text[:-1].rstrip()} [{alias}]:"
    return f"{text} [{alias}]"
