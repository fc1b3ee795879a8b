"""The dashboard's two question lists: most often refused, and answered with least confidence.

"Most often refused" sums the pre-aggregated `DailyRefusedQuestion` rows of the period (one per
day, cut and question text), so a year costs a few hundred thousand narrow rows at most, not a
grouping of every refused turn by its text. "Least confident" reads the turn log: it walks the
partial index on (confidence, created_at) and stops after ten rows. Only readers who may see
turns get them (analysts see the aggregates, never a question).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q, Sum

from apps.analytics.dashboard.selectors import Period
from apps.analytics.models import ANY, DailyRefusedQuestion
from apps.answers.models import Turn
from apps.answers.turn.cuts import asker_group_q, local_days_q, readable_collection_q

SHOWN = 10


@dataclass(frozen=True)
class QuestionCount:
    question: str
    turns: int


@dataclass(frozen=True)
class LowConfidence:
    turn_id: int
    question: str
    confidence: float
    asked: dt.datetime


def period_turns_q(period: Period) -> Q:
    """The turns a period's figures count, as the turn list's filters select them."""
    condition = local_days_q(period.first, period.last)
    if period.collection != ANY:
        condition &= readable_collection_q(period.collection)
    if period.group != ANY:
        condition &= asker_group_q(period.group)
    if period.category != ANY:
        # As the turn list's category filter selects them: one decision per turn and category.
        condition &= Q(category_decisions__category_id=period.category)
    return condition


def questions_refused(*, period: Period) -> list[QuestionCount]:
    rows = (
        period.cut(DailyRefusedQuestion.objects.all())
        .order_by()
        .values("question")
        .annotate(turns=Sum("turns"))
        .order_by("-turns", "question")[:SHOWN]
    )
    return [QuestionCount(r["question"], r["turns"]) for r in rows]


def questions_least_confident(*, period: Period) -> list[LowConfidence]:
    rows = (
        Turn.objects.filter(period_turns_q(period), confidence__isnull=False)
        .order_by("confidence", "-created_at")
        .values_list("pk", "question", "confidence", "created_at")[:SHOWN]
    )
    return [LowConfidence(pk, question, float(c or 0), asked) for pk, question, c, asked in rows]
