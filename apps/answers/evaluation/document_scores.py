"""Scoring `evaluate_documents`: each question's stored turn against its questions-file line.

A question is right when the turn answered it (the answer route, or the hybrid route that also
shows the document list; finished, not refused) and the answer contains one of its `answers`,
ignoring case and whitespace; an unanswerable question is right when the composer refused it.
A refusal is the composer's own (`Turn.refused`): a clarifying question, a bare list of
documents (the search route) or a failed turn is neither an answer nor a refusal. The
calibration error compares the confidence of every answer given (refusals left out, as
`evaluate_answers` does: their confidence is held in the red band) with being right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from apps.answers.composing.confidence import ConfidenceBand, expected_calibration_error
from apps.answers.evaluation.answer_metrics import answer_string_found
from apps.answers.evaluation.document_questions import UNANSWERABLE, DocumentQuestion
from apps.answers.evaluation.metrics import percentile, share
from apps.answers.evaluation.signals import QuestionSignals
from apps.answers.routing.types import TurnAction

ANSWERING_ACTIONS = frozenset({TurnAction.ANSWER, TurnAction.HYBRID})
WELL_SUPPORTED = ConfidenceBand.GREEN  # the top band: "Well supported" on the chat page


@dataclass(frozen=True)
class AskedTurn:
    """What one question's stored turn says, as the audit shows it."""

    turn_id: int
    status: str
    action: str  # the route: answer, hybrid, search, clarify, chat
    intent: str
    strategy: str
    answer: str
    refused: bool
    confidence: float | None
    band: str
    cited_files: tuple[str, ...]  # file names of the sources shown with the answer, cited first
    error: str = ""  # "code: message" of a failed turn, or why the question was not asked
    latency_ms: float = 0.0  # from opening the turn to its last event
    refusal_reason: str = ""
    confidence_inputs: Mapping[str, Any] = field(default_factory=dict)  # Turn.confidence_inputs


@dataclass(frozen=True)
class QuestionRecord:
    id: str
    kind: str
    language: str
    format: str
    question: str
    answer: str
    gold_file: str | None
    cited_files: tuple[str, ...]
    confidence: float | None
    band: str
    refused: bool
    correct: bool
    gold_cited: bool
    route: str
    intent: str
    strategy: str
    status: str
    error: str
    latency_ms: float
    turn_id: int
    refusal_reason: str = ""
    confidence_inputs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def answerable(self) -> bool:
        return self.kind != UNANSWERABLE

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cited_files": list(self.cited_files)}

    def signals(self, *, dataset: str) -> QuestionSignals:
        """The line `--signals` writes: the same fields `evaluate_answers --signals` writes, so
        benchmarks/calibration_fit.py fits the blend on real documents beside the public sets;
        "right" is `correct` (the asked-for fact is in the answer), the group the gold file."""
        inputs = self.confidence_inputs
        support = inputs.get("support")
        cosine = inputs.get("cosine")
        return QuestionSignals(
            set=dataset,
            query_id=self.id,
            group=self.gold_file or self.id,
            answerable=self.answerable,
            refused=self.refused,
            refusal_reason=self.refusal_reason,
            right=self.correct and self.answerable,
            support=float(support) if support is not None else None,
            support_source=str(inputs.get("support_source", "")),
            cosine=float(cosine) if cosine is not None else None,
            agreed=bool(inputs.get("agreed", False)),
            confidence=self.confidence or 0.0,
            answerability={k: float(v) for k, v in dict(inputs.get("signals", {})).items()},
            contained=self.correct and self.answerable,
        )


def question_score(*, question: DocumentQuestion, asked: AskedTurn) -> QuestionRecord:
    answered = asked.action in ANSWERING_ACTIONS and asked.status == "finished"
    if question.answerable:
        correct = (
            answered and not asked.refused and answer_string_found(asked.answer, question.answers)
        )
    else:
        correct = asked.refused
    return QuestionRecord(
        id=question.question_id,
        kind=question.kind,
        language=question.language,
        format=question.file_format,
        question=question.question,
        answer=asked.answer,
        gold_file=question.gold_file,
        cited_files=asked.cited_files,
        confidence=asked.confidence,
        band=asked.band,
        refused=asked.refused,
        correct=correct,
        gold_cited=question.gold_file is not None and question.gold_file in asked.cited_files,
        route=asked.action,
        intent=asked.intent,
        strategy=asked.strategy,
        status=asked.status,
        error=asked.error,
        latency_ms=round(asked.latency_ms, 1),
        turn_id=asked.turn_id,
        refusal_reason=asked.refusal_reason,
        confidence_inputs=asked.confidence_inputs,
    )


def _share(values: Sequence[bool]) -> float | None:
    return share(values, empty=None)


def records_figures(records: Sequence[QuestionRecord]) -> dict[str, Any]:
    """The figures of one group of questions; a share is None when nothing counts towards it."""
    answerable = [r for r in records if r.answerable]
    unanswerable = [r for r in records if not r.answerable]
    top = [r for r in records if r.band == WELL_SUPPORTED]
    given = [r for r in records if r.confidence is not None and not r.refused]
    return {
        "questions": len(records),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "correct": _share([r.correct for r in records]),
        "gold_file_cited": _share([r.gold_cited for r in answerable]),
        "false_refusals": _share([r.refused for r in answerable]),
        "honest_refusals": _share([r.refused for r in unanswerable]),
        "well_supported": len(top),
        "well_supported_precision": _share([r.correct for r in top]),
        "calibration_error": round(
            expected_calibration_error([(r.confidence or 0.0, r.correct) for r in given]), 4
        )
        if given
        else None,
        "bare_result_lists": sum(r.route == TurnAction.SEARCH for r in records),
        "clarifications": sum(r.route == TurnAction.CLARIFY for r in records),
        "failed": sum(r.status != "finished" for r in records),
        "latency_ms_p50": round(percentile([r.latency_ms for r in records], 50), 1),
        "latency_ms_p95": round(percentile([r.latency_ms for r in records], 95), 1),
    }


def records_summarise(records: Sequence[QuestionRecord]) -> dict[str, Any]:
    """Every question together, then cut by kind, by file format and by language."""
    return {
        "overall": records_figures(records),
        "by_kind": _by(records, lambda r: r.kind),
        "by_format": _by(records, lambda r: r.format),
        "by_language": _by(records, lambda r: r.language or "?"),
    }


def _by(
    records: Iterable[QuestionRecord], key: Callable[[QuestionRecord], str]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[QuestionRecord]] = {}
    for record in records:
        groups.setdefault(key(record), []).append(record)
    return {name: records_figures(group) for name, group in sorted(groups.items())}
