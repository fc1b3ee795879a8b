"""Candidate sentences of the context window, and choosing the best non-redundant ones."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from apps.answers.composing.terms import content_terms, word_set
from apps.answers.retrieval.types import ContextWindow
from apps.answers.streaming import escape_markers
from apps.corpus.text import split_sentences, words

Vector = npt.NDArray[np.float32]

RELATIVE_FLOOR = 0.6  # a further sentence must score at least this share of the best one


@dataclass(frozen=True)
class Sentence:
    text: str
    alias: str
    rank: int  # the chunk's position in the context window, 0 = best
    position: int  # the sentence's position in its chunk
    terms: frozenset[str]
    step: bool  # reads like a step of a procedure


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    similarity: float  # rescaled to 0-1; 0 when the sentence was not embedded
    overlap: float
    score: float
    vector: Vector | None


@dataclass(frozen=True)
class Evidence:
    scored: tuple[Scored, ...]
    chosen: tuple[Scored, ...]
    value: float


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
        numbered = False  # split_sentences cuts "1. Open it." after "1.": carry the cue over
        for position, raw in enumerate(split_sentences(chunk.text)):
            # A marker in a document's own text is quoted escaped, never taken for a citation.
            text = _BULLET.sub("", escape_markers(raw)).strip()
            step = numbered or bool(_LIST_NUMBER.match(text)) or _reads_like_step(text)
            numbered = bool(re.fullmatch(r"\(?\d{1,2}[.)]", text))
            text = _LIST_NUMBER.sub("", text)
            # A question in the source (an FAQ heading) restates the ask; it never answers it.
            if text.endswith(("?", "؟")):
                continue
            if len(words(text)) >= (2 if step else 3) and not text.startswith("#"):
                terms = content_terms(text)
                found.append(Sentence(text, chunk.alias, rank, position, terms, step))
    return found


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
