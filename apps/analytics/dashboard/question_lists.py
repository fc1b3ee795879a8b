"""The dashboard's two question lists: most often refused, and answered with least confidence.

"Most often refused" sums pre-aggregated rows by the question's id: `MonthlyRefusedQuestion` for
the whole calendar months inside the period, `DailyRefusedQuestion` for the days at its two
ends, each an index-only scan, so a year sums twelve months of rows and at most two months of
days, never a grouping of the refused turns by their text. "Least confident" reads the turn
log: it walks the partial index on (confidence, created_at) and stops after ten rows. Only
readers who may see turns get them (analysts see the aggregates, never a question).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q

from apps.analytics.dashboard.periods import Period, next_month
from apps.analytics.models import ANY, DailyRefusedQuestion, MonthlyRefusedQuestion, QuestionText
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
    """The most refused questions, most first, ties by text; one query."""
    months, days = month_spans(period)
    cut = 'collection = %(collection)s AND "group" = %(group)s AND category = %(category)s'
    daily, monthly = DailyRefusedQuestion._meta.db_table, MonthlyRefusedQuestion._meta.db_table
    # The top ten sums WITH TIES are summed by id alone; only they are joined to their texts,
    # which order the ties exactly as grouping by text would.
    sql = f"""
        SELECT q.text, top.turns FROM (
            SELECT question_id, SUM(turns) AS turns FROM (
                SELECT question_id, turns FROM {monthly}
                WHERE {cut} AND month >= %(month_from)s AND month < %(month_to)s
                UNION ALL
                SELECT question_id, turns FROM {daily}
                WHERE {cut} AND day BETWEEN %(head_from)s AND %(head_to)s
                UNION ALL
                SELECT question_id, turns FROM {daily}
                WHERE {cut} AND day BETWEEN %(tail_from)s AND %(tail_to)s
            ) counted
            GROUP BY question_id ORDER BY turns DESC FETCH FIRST %(shown)s ROWS WITH TIES
        ) top JOIN {QuestionText._meta.db_table} q ON q.id = top.question_id
        ORDER BY top.turns DESC, q.text LIMIT %(shown)s
    """  # noqa: S608 - table names are the models'; every value is a parameter
    params: dict[str, int | dt.date] = {
        "collection": period.collection, "group": period.group, "category": period.category,
        "month_from": months[0], "month_to": months[1], "head_from": days[0][0],
        "head_to": days[0][1], "tail_from": days[1][0], "tail_to": days[1][1], "shown": SHOWN,
    }  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [QuestionCount(text, int(turns)) for text, turns in cursor.fetchall()]


DaySpan = tuple[dt.date, dt.date]


def month_spans(period: Period) -> tuple[DaySpan, tuple[DaySpan, DaySpan]]:
    """The whole calendar months inside the period, as [first month, month after the last) by
    their first days, and the days before and after them (a span whose first day is after its
    last is empty). Without a whole month, the period is all days."""
    start = period.first if period.first.day == 1 else next_month(period.first)
    stop = (period.last + dt.timedelta(days=1)).replace(day=1)
    none = (period.last + dt.timedelta(days=1), period.last)
    if start >= stop:
        return (start, start), ((period.first, period.last), none)
    return (start, stop), ((period.first, start - dt.timedelta(days=1)), (stop, period.last))


def questions_least_confident(*, period: Period) -> list[LowConfidence]:
    rows = (
        Turn.objects.filter(period_turns_q(period), confidence__isnull=False)
        .order_by("confidence", "-created_at")
        .values_list("pk", "question", "confidence", "created_at")[:SHOWN]
    )
    return [LowConfidence(pk, question, float(c or 0), asked) for pk, question, c, asked in rows]
