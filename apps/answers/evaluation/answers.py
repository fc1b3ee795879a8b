"""Grounded-answer quality on a BEIR-layout set with answers (PersianQA style).

Each question goes through the same retrieval, context, compose stream and confidence blend as
a turn (the router is left out: these are all questions by construction).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from asgiref.sync import async_to_sync

from apps.answers.composing.confidence import (
    RetrievalFeatures,
    expected_calibration_error,
    retrieval_features,
)
from apps.answers.composing.types import ComposeRequest
from apps.answers.evaluation.answer_metrics import contains_answer, exact_match, token_f1
from apps.answers.evaluation.beir import BeirQuery, corpus_id_from_filename
from apps.answers.evaluation.metrics import percentile
from apps.answers.evaluation.metrics import share as share_of
from apps.answers.evaluation.signals import QuestionSignals
from apps.answers.events import EventType
from apps.answers.providers.registry import Providers
from apps.answers.retrieval.context import context_build
from apps.answers.retrieval.types import QueryRewrite, RetrievalRequest, RetrievedChunk
from apps.answers.routing.types import HistoryMessage, Intent, Strategy
from apps.answers.turn.compose_stream import (
    ComposeOutcome,
    answer_confidence,
    badge_signals,
    compose_events,
)
from apps.answers.turn.recorder import MemoryRecorder
from apps.corpus.search.legs import SearchFilters
from apps.corpus.text import detect_language

logger = logging.getLogger(__name__)


@dataclass
class AnswerScores:
    gold_cited: list[bool] = field(default_factory=list)
    gold_contained: list[bool] = field(default_factory=list)
    exact: list[bool] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    refused_answerable: list[bool] = field(default_factory=list)
    refused_unanswerable: list[bool] = field(default_factory=list)
    # (blended confidence, answer was right) for every answer given (refusals excluded):
    # right = it cites the gold passage of an answerable question.
    confidence_pairs: list[tuple[float, bool]] = field(default_factory=list)
    cited_relevant: int = 0
    cited_total: int = 0
    latency_ms: list[float] = field(default_factory=list)
    first_text_ms: list[float] = field(default_factory=list)  # question to first text shown
    refusal_confidences: list[float] = field(default_factory=list)  # every refusal must be red
    # Questions the composer failed on (query id, what went wrong): listed, left out of
    # every figure above, and the run goes on.
    errors: list[dict[str, str]] = field(default_factory=list)
    signals: list[QuestionSignals] = field(default_factory=list)  # one per scored question
    # What answered each question, and why another than the configured composer did: the
    # figures of a model that fell back are the fallback's, and must be named so.
    answered_by: list[dict[str, str]] = field(default_factory=list)
    by_composer: dict[str, AnswerScores] = field(default_factory=dict)

    def part(self, composer: str) -> AnswerScores:
        """The figures of the questions `composer` answered."""
        return self.by_composer.setdefault(composer, AnswerScores())

    def fallbacks(self) -> dict[str, Any]:
        reasons = Counter(q["fallback_reason"] for q in self.answered_by if q["fallback_reason"])
        return {"fallbacks": sum(reasons.values()), "fallback_reasons": dict(reasons)}

    def summary(self, **extra: Any) -> dict[str, Any]:
        composers = sorted(self.by_composer)
        return {
            **self.figures(),
            # Whoever answered: one name, or every name when a fallback answered some.
            "composer": " + ".join(composers) if composers else extra.pop("composer", ""),
            **self.fallbacks(),
            "by_composer": {name: self.by_composer[name].figures() for name in composers},
            **extra,
        }

    def figures(self) -> dict[str, Any]:
        def share(values: Sequence[bool]) -> float:
            return share_of(values, empty=0.0)

        return {
            "gold_passage_cited": share(self.gold_cited),
            "gold_answer_contained": share(self.gold_contained),
            "exact_match": share(self.exact),
            "token_f1": round(sum(self.f1) / len(self.f1), 4) if self.f1 else 0.0,
            "refusal_rate_unanswerable": share(self.refused_unanswerable),
            "false_refusal_rate": share(self.refused_answerable),
            "refusal_confidence_max": round(max(self.refusal_confidences, default=0.0), 4),
            "citation_precision": round(self.cited_relevant / self.cited_total, 4)
            if self.cited_total
            else 0.0,
            "confidence_ece": round(expected_calibration_error(self.confidence_pairs), 4),
            "confidence_mean": round(
                sum(c for c, _ in self.confidence_pairs) / len(self.confidence_pairs), 4
            )
            if self.confidence_pairs
            else 0.0,
            "answerable": len(self.gold_cited),
            "unanswerable": len(self.refused_unanswerable),
            "latency_ms_p50": round(percentile(self.latency_ms, 50), 1),
            "latency_ms_p95": round(percentile(self.latency_ms, 95), 1),
            "first_text_ms_p50": round(percentile(self.first_text_ms, 50), 1),
            "first_text_ms_p95": round(percentile(self.first_text_ms, 95), 1),
            "composer_errors": len(self.errors),
            "errors": self.errors,
        }


@dataclass(frozen=True)
class AnsweredQuestion:
    text: str
    cited_documents: tuple[str, ...]
    refused: bool
    confidence: float  # blended exactly as a turn blends it
    ranked_documents: tuple[str, ...] = ()  # retrieval's order, a document at its best chunk
    error: str = ""  # the composer's failure (after text, or with no fallback to take over)
    support: float | None = None  # the composer's own, before the blend
    support_source: str = ""
    refusal_reason: str = ""
    features: RetrievalFeatures | None = None  # what the retrieval quality was computed from
    answerability: tuple[tuple[str, float], ...] = ()  # the badge's signals, by name
    composer: str = ""  # what wrote the answer: the configured composer or its fallback
    fallback_reason: str = ""  # why the fallback did, if it did
    first_text_ms: float | None = None  # from the question to the first text shown


def answer_one(
    *,
    query: str,
    providers: Providers,
    filters: SearchFilters,
    budget: int,
    strategy: Strategy = Strategy.SIMPLE,
) -> AnsweredQuestion:
    """One question through a turn's own retrieval, context and compose stream (events are
    numbered in memory, not stored: an evaluation writes no turns)."""
    return async_to_sync(question_answer)(
        query=query, providers=providers, filters=filters, budget=budget, strategy=strategy
    )


async def question_answer(
    *,
    query: str,
    providers: Providers,
    filters: SearchFilters,
    budget: int,
    history: tuple[HistoryMessage, ...] = (),
    rewrite: QueryRewrite | None = None,
    strategy: Strategy = Strategy.SIMPLE,
) -> AnsweredQuestion:
    """`answer_one` inside a conversation: with its window and a follow-up's rewrite."""
    started = time.perf_counter()
    result = await providers.retriever.retrieve(
        RetrievalRequest(query=query, filters=filters, rewrite=rewrite, strategy=strategy)
    )
    context = context_build(chunks=result.chunks, budget_tokens=budget)
    request = ComposeRequest(
        query=rewrite.query if rewrite else query,  # as the turn's answer route does
        intent=Intent.FACTUAL_QUESTION,
        language=detect_language(query),
        context=context,
        history=history,
        bridges=result.bridges,
    )
    outcome = ComposeOutcome()
    first_text_ms: float | None = None
    async for envelope in compose_events(
        composer=providers.composer,
        fallback=providers.fallback_composer,
        request=request,
        recorder=MemoryRecorder(),
        outcome=outcome,
    ):
        if first_text_ms is None and envelope["type"] == EventType.TOKEN:
            first_text_ms = (time.perf_counter() - started) * 1000
    return replace(_answered(outcome, result.chunks), first_text_ms=first_text_ms)


def _answered(outcome: ComposeOutcome, chunks: Sequence[RetrievedChunk]) -> AnsweredQuestion:
    cited = tuple(dict.fromkeys(corpus_id_from_filename(c.source_file) for c in outcome.citations))
    ranked = tuple(dict.fromkeys(corpus_id_from_filename(c.filename) for c in chunks))
    return AnsweredQuestion(
        outcome.text,
        cited,
        outcome.refused,
        answer_confidence(outcome=outcome, chunks=chunks),
        ranked,
        f"{outcome.error.code}: {outcome.error}" if outcome.error else "",
        support=outcome.support,
        support_source=outcome.support_source,
        refusal_reason=outcome.refusal_reason,
        features=retrieval_features(chunks),
        answerability=tuple(badge_signals(outcome).items()),
        composer=outcome.composer,
        fallback_reason=outcome.fallback_reason,
    )


def answers_evaluate(
    *,
    queries: Sequence[BeirQuery],
    providers: Providers,
    filters: SearchFilters,
    budget: int,
    strategy: Strategy = Strategy.SIMPLE,
    progress: Callable[[int], None] | None = None,
    dataset: str = "",
) -> AnswerScores:
    scores = AnswerScores()
    for done, query in enumerate(queries, start=1):
        start = time.perf_counter()
        error = ""
        try:
            answered = answer_one(
                query=query.text,
                providers=providers,
                filters=filters,
                budget=budget,
                strategy=strategy,
            )
            error = answered.error
        except Exception as exc:  # one broken question must not cost the run its figures
            logger.warning("Question %s failed: %s", query.query_id, exc, exc_info=True)
            error = f"{type(exc).__name__}: {exc}"
        if error:
            scores.errors.append({"query_id": query.query_id, "error": error[:500]})
        else:
            latency_ms = (time.perf_counter() - start) * 1000
            for part in (scores, scores.part(answered.composer)):
                part.latency_ms.append(latency_ms)
                if answered.first_text_ms is not None:
                    part.first_text_ms.append(answered.first_text_ms)
                right = _score(part, query, answered)
            scores.signals.append(_signals(dataset, query, answered, right=right))
            scores.answered_by.append(_answered_by(query, answered))
        if progress:
            progress(done)
    return scores


def _answered_by(query: BeirQuery, answered: AnsweredQuestion) -> dict[str, str]:
    return {
        "query_id": query.query_id,
        "composer": answered.composer,
        "fallback_reason": answered.fallback_reason,
    }


def _score(scores: AnswerScores, query: BeirQuery, answered: AnsweredQuestion) -> bool:
    """Adds the question to the figures; True when it is answerable and a gold passage is cited
    (whether or not the answer is a refusal)."""
    impossible = bool(query.extra.get("is_impossible"))
    right = not impossible and any(d in query.relevant for d in answered.cited_documents)
    if impossible:
        scores.refused_unanswerable.append(answered.refused)
    else:
        _score_answerable(scores, query, answered)
    if answered.refused:
        scores.refusal_confidences.append(answered.confidence)
    else:
        scores.confidence_pairs.append((answered.confidence, right))
    return right


def _score_answerable(scores: AnswerScores, query: BeirQuery, answered: AnsweredQuestion) -> None:
    scores.refused_answerable.append(answered.refused)
    scores.gold_cited.append(any(doc in query.relevant for doc in answered.cited_documents))
    golds = _golds(query)
    # A refusal is not an answer, whatever titles it lists.
    text = "" if answered.refused else answered.text
    scores.gold_contained.append(contains_answer(text, golds))
    scores.exact.append(exact_match(text, golds))
    scores.f1.append(token_f1(text, golds))
    scores.cited_total += len(answered.cited_documents)
    scores.cited_relevant += sum(doc in query.relevant for doc in answered.cited_documents)


def _signals(
    dataset: str, query: BeirQuery, answered: AnsweredQuestion, *, right: bool
) -> QuestionSignals:
    features = answered.features
    return QuestionSignals(
        set=dataset,
        query_id=query.query_id,
        group=str(query.extra.get("context_id") or ""),
        answerable=not query.extra.get("is_impossible"),
        refused=answered.refused,
        refusal_reason=answered.refusal_reason,
        right=right,
        support=answered.support,
        support_source=answered.support_source,
        cosine=features.cosine if features else None,
        agreed=features.agreed if features else False,
        confidence=answered.confidence,
        answerability=dict(answered.answerability),
        contained=_contained(query, answered),
    )


def _golds(query: BeirQuery) -> list[str]:
    gold = query.extra.get("answers")
    return [str(a) for a in gold if str(a).strip()] if isinstance(gold, list) else []


def _contained(query: BeirQuery, answered: AnsweredQuestion) -> bool | None:
    golds = _golds(query)
    if query.extra.get("is_impossible"):
        return False
    return contains_answer(answered.text, golds) if golds else None
