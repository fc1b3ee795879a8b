"""Candidate sentences of the context window, and choosing the best non-redundant ones."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from apps.answers.composing.candidates import Scored, Sentence, Vector
from apps.answers.composing.structure import CODE, PROSE, STEP, Line, chunk_lines, never_answers
from apps.answers.composing.subjects import (
    FOLLOWER_REACH,
    about_each_other,
    entry_name,
    subject_of,
)
from apps.answers.composing.terms import content_terms, word_set
from apps.answers.retrieval.types import ContextWindow
from apps.answers.streaming import escape_markers
from apps.corpus.text import split_sentences, words

RELATIVE_FLOOR = 0.6  # a further sentence must score at least this share of the best one


_BULLET = re.compile(r"^\s*(?:[-*•·▪]\s+)")


_LIST_NUMBER = re.compile(r"^\(?\d{1,2}[.)](?:\s+|$)")
_STEP_CUE = re.compile(
    r"^(?:step\s+\d|first(?:ly)?\b|second(?:ly)?\b|third(?:ly)?\b|then\b|next\b|after\s+that\b"
    r"|afterwards\b|finally\b|lastly\b|ابتدا|سپس|بعد\s+از\s+آن|در\s+نهایت|در\s+پایان|مرحله|گام|نخست)",
    re.IGNORECASE,
)
_IMPERATIVES = word_set(
    """open click go select enter fill submit send sign log choose press attach wait upload
    download request ask contact complete check install create add review print email call
    visit type save navigate find make take use set run follow approve apply provide register
    book write read copy update restart turn connect confirm scan keep remove"""
)
_FA_IMPERATIVE_VERBS = word_set("کنید شوید نمایید دهید کنند")


def sentence_candidates(context: ContextWindow, *, max_chunks: int = 6) -> list[Sentence]:
    found: list[Sentence] = []
    for rank, chunk in enumerate(context.chunks[:max_chunks]):
        source = chunk.chunk
        section = f"{source.title} > {source.heading}"
        heading_tail = section.rsplit(">", 1)[-1].strip()
        heading_terms = content_terms(section)
        position = 0
        for number, line in enumerate(chunk_lines(chunk.text)):
            heads: list[tuple[int, str]] = []  # this line's sentences so far: (position, text)
            for text, step in _line_sentences(line):
                shortest = 1 if line.kind != PROSE else (2 if step else 3)
                code = line.kind == CODE  # a "# comment" or a "?" pattern is code, not a question
                if (never_answers(text) and not code) or len(words(text)) < shortest:
                    continue
                intro = line.intro and text.endswith(":")
                extent = text
                subject = subject_of(text, heads) if line.kind == PROSE else None
                if intro or line.kind != PROSE:
                    # An item alone is often a fragment ("PDF files (.pdf)"): its section and
                    # what it belongs to say what it answers.
                    extent = f"{text} {line.context} {heading_tail}"
                elif subject is not None:
                    extent = f"{subject[1]} {text}"
                heads.append((position, text))
                terms = content_terms(extent)
                found.append(
                    Sentence(
                        text, chunk.alias, rank, position, terms, step,
                        kind=line.kind, line=number, intro=intro, extent=extent.strip(),
                        heading_terms=heading_terms, section=section,
                        language=source.language, quoted=escape_markers(line.quoted),
                        subject=subject[0] if subject is not None else -1,
                        lent=terms - content_terms(text) if subject is not None else frozenset(),
                        entry=entry_name(text),
                    )
                )  # fmt: skip
                position += 1
    return found


def embedded_text(sentence: Sentence) -> str:
    """What is embedded for a sentence; the vectors stored ahead of questions are of this text."""
    return sentence.extent or sentence.text


def embedded_texts(sentence: Sentence) -> tuple[str, ...]:
    """Every text a sentence may be embedded as: a dependent one alone, too, for questions its
    subject says nothing to (`with_lent_terms_where_due`)."""
    text = embedded_text(sentence)
    return (text, sentence.text) if sentence.lent and text != sentence.text else (text,)


def _line_sentences(line: Line) -> list[tuple[str, bool]]:
    """A list item, step, row or code block is one unit, kept whole; prose is cut into
    sentences."""
    if line.kind == CODE:  # as written: no sentence cut, no pointer dropped, lines kept
        return [(escape_markers(line.text), False)]
    if line.kind != PROSE:
        # Kept whole, without a closing pointer ("... --wait. See 07-ingesting-documents.").
        kept = [p for p in split_sentences(line.text) if not never_answers(p)] or [line.text]
        # A marker in a document's own text is quoted escaped, never taken for a citation.
        text = escape_markers(" ".join(kept)).strip()
        return [(text, line.kind == STEP or _reads_like_step(text))]
    pieces: list[tuple[str, bool]] = []
    numbered = False  # split_sentences cuts "1. Open it." after "1.": carry the cue over
    for raw in split_sentences(line.text):
        # A marker in a document's own text is quoted escaped, never taken for a citation.
        text = _BULLET.sub("", escape_markers(raw)).strip()
        step = numbered or bool(_LIST_NUMBER.match(text)) or _reads_like_step(text)
        numbered = bool(re.fullmatch(r"\(?\d{1,2}[.)]", text))
        pieces.append((_LIST_NUMBER.sub("", text), step))
    return _label_merged(pieces)


_LABEL_WORD = re.compile(r"^[(\[]?[A-Z0-9]")


def _label_merged(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """A label sentence ("SSE (Server-Sent Events). A way of ...": a glossary entry, a bold
    lead-in) is joined to the sentence after it, "SSE (Server-Sent Events): A way of ...":
    the label alone answers nothing, and the sentence after it does not say what it is about."""
    merged: list[tuple[str, bool]] = []
    label = ""
    for text, step in pieces:
        if label:
            merged.append((f"{label}: {text}", step))
            label = ""
        elif _is_label(text):
            label = text.rstrip(".:")
        else:
            merged.append((text, step))
    return [*merged, (label, False)] if label else merged


def _is_label(text: str) -> bool:
    label = text.split()
    return (
        len(label) <= 5
        and all(_LABEL_WORD.match(word) for word in label)
        and not never_answers(text)
    )


def _reads_like_step(text: str) -> bool:
    tokens = words(text.lower())
    if not tokens:
        return False
    if _STEP_CUE.match(text) or tokens[0] in _IMPERATIVES:
        return True
    # Persian instructions end in a plural imperative: "... را پر کنید", "وارد شوید", "بفرستید".
    last = tokens[-1]
    return last in _FA_IMPERATIVE_VERBS or (last.startswith("ب") and last.endswith("ید"))


def cosines(query: Vector, matrix: Vector) -> Vector:
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(query)) or 1.0)
    return (matrix @ query) / np.maximum(norms, 1e-12)


def redundant(candidate: Scored, chosen: Iterable[Scored], *, max_cosine: float = 0.95) -> bool:
    """Too close to a chosen sentence: most terms shared, or nearly the same vector."""
    terms = candidate.sentence.terms
    for other in chosen:
        if about_each_other(candidate.sentence, other.sentence):
            continue
        union = terms | other.sentence.terms
        if union and len(terms & other.sentence.terms) / len(union) >= 0.6:
            return True
        if _cosine(candidate.vector, other.vector) >= max_cosine:
            return True
    return False


def _cosine(a: Vector | None, b: Vector | None) -> float:
    if a is None or b is None:
        return 0.0
    return float(cosines(a, b[None, :])[0])


def pick(scored: Sequence[Scored], *, max_sentences: int, max_chars: int) -> tuple[Scored, ...]:
    """The best non-redundant sentences within the length budget, in document order."""
    ranked = sorted(scored, key=lambda s: -s.score)
    chosen: list[Scored] = []
    used = 0
    for candidate in ranked:
        if len(chosen) == max_sentences or candidate.score < RELATIVE_FLOOR * ranked[0].score:
            break
        too_long = used + len(candidate.sentence.text) > max_chars
        if (too_long and chosen) or redundant(candidate, chosen):
            continue
        chosen.append(candidate)
        used += len(candidate.sentence.text) + 1
    return tuple(sorted(chosen, key=lambda s: (s.sentence.rank, s.sentence.position)))


# Where a manual's next entry begins: a sentence led by the name it describes, not a word of
# prose ("notifempty Do not rotate ...", "NumberOfPasswordPrompts Specifies ...",
# "-d, --debug Turn on ..."): a lower-case word, an option, or a name with inner capitals.
_ENTRY_HEAD = re.compile(r"^(?:[a-z][\w.-]*\s|--?\w|[A-Z][a-z0-9]+[A-Z]\w*\s)")


def with_stating_follower(
    chosen: Sequence[Scored],
    scored: Sequence[Scored],
    *,
    states: Callable[[str], bool],
    max_sentences: int,
    max_chars: int,
) -> tuple[Scored, ...]:
    """The chosen sentences, and the one after the best that states what was asked when the
    best does not: "NumberOfPasswordPrompts Specifies the number of password prompts before
    giving up." names the option asked about and matches the question best, while "The
    default is 3." two sentences on states the answer and matches nothing but "default". It
    is taken from the same paragraph, within FOLLOWER_REACH sentences, before another entry
    begins; the lowest-scored others make room for it."""
    if not chosen:
        return tuple(chosen)
    best = max(chosen, key=lambda s: s.score)
    if states(best.sentence.text):
        return tuple(chosen)
    follower = _stating_follower(best.sentence, scored, states=states)
    if follower is None or any(s.sentence == follower.sentence for s in chosen):
        return tuple(chosen)
    kept = sorted(chosen, key=lambda s: -s.score)
    while kept and (
        len(kept) >= max_sentences
        or sum(len(s.sentence.text) + 1 for s in kept) + len(follower.sentence.text) > max_chars
    ):
        if len(kept) == 1:
            break  # the best stays, whatever the follower's length
        kept.pop()
    return tuple(sorted([*kept, follower], key=lambda s: (s.sentence.rank, s.sentence.position)))


def _stating_follower(
    anchor: Sentence, scored: Sequence[Scored], *, states: Callable[[str], bool]
) -> Scored | None:
    after = sorted(
        (
            s
            for s in scored
            if s.sentence.alias == anchor.alias
            and s.sentence.line == anchor.line
            and 0 < s.sentence.position - anchor.position <= FOLLOWER_REACH
        ),
        key=lambda s: s.sentence.position,
    )
    for candidate in after:
        if _ENTRY_HEAD.match(candidate.sentence.text):
            return None  # the next entry: what it states is about another name
        if states(candidate.sentence.text):
            return candidate
    return None
