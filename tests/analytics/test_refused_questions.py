"""The "most often refused" list from the pre-aggregated refused-question rows (by day, and
summed by month): the same rows as grouping the turn log by text, for every cut and for periods
with and without whole months, kept by the idempotent daily refresh."""

from __future__ import annotations

import datetime as dt
import itertools
import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Sum
from django.db.models.functions import TruncMonth

from apps.analytics.counts.refused_questions import LOCK
from apps.analytics.dashboard.periods import Period
from apps.analytics.dashboard.question_lists import (
    SHOWN,
    QuestionCount,
    month_spans,
    period_turns_q,
    questions_refused,
)
from apps.analytics.models import ANY, DailyRefusedQuestion, MonthlyRefusedQuestion, QuestionText
from apps.analytics.services import daily_counts_refresh, daily_counts_refresh_range
from apps.answers.models import Turn
from apps.answers.turn.cuts import local_day
from tests.analytics.dashboard_world import FIRST, LAST, World, world_build
from tests.factories import ConversationFactory, TurnFactory

pytestmark = pytest.mark.django_db

# More than SHOWN distinct refused questions, some repeated, with ties, so the order and the
# cut at ten rows are both exercised.
QUESTIONS = [f"Refused question {n % 13}" for n in range(60)]


def _turn_log_refused(period: Period) -> list[QuestionCount]:
    """The list as the dashboard computed it before the pre-aggregation: the turn log grouped."""
    rows = (
        Turn.objects.filter(period_turns_q(period), refused=True)
        .order_by()
        .values("question")
        .annotate(turns=Count("pk"))
        .order_by("-turns", "question")[:SHOWN]
    )
    return [QuestionCount(r["question"], r["turns"]) for r in rows]


# Spans whole months and parts of others: January's end, February and March, April's start.
SPAN_FIRST, SPAN_LAST = dt.date(2026, 1, 20), dt.date(2026, 4, 10)
SPAN_DAYS = (SPAN_LAST - SPAN_FIRST).days + 1


def _refused_turns(world: World, days: list[dt.date]) -> None:
    """One refused turn a day listed, its question from QUESTIONS, over every kind of cut."""
    readable = itertools.cycle([[world.a.pk], [world.b.pk], None])
    users = [*world.g1.user_set.all(), None]
    for n, day in enumerate(days):
        turn = TurnFactory.create(
            conversation=ConversationFactory.create(user=users[n % len(users)]),
            question=QUESTIONS[n % len(QUESTIONS)],
            refused=True,
            refusal_reason="Not in the documents",
            readable_collections=next(readable),
        )
        when = dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)
        Turn.objects.filter(pk=turn.pk).update(created_at=when)
        if n % 3 == 0:
            turn.category_decisions.create(category=world.hr, score=0.5, assigned_by="test")


@pytest.fixture
def world() -> World:
    world = world_build()
    _refused_turns(world, [FIRST + dt.timedelta(days=n % 14) for n in range(len(QUESTIONS))])
    daily_counts_refresh_range(first=FIRST, last=LAST)
    return world


@pytest.fixture
def months_world() -> World:
    world = world_build()
    days = [SPAN_FIRST + dt.timedelta(days=n * 7 % SPAN_DAYS) for n in range(2 * len(QUESTIONS))]
    _refused_turns(world, days)
    daily_counts_refresh_range(first=SPAN_FIRST, last=SPAN_LAST)
    return world


def _cuts(world: World) -> list[tuple[int, int, int]]:
    return [
        (ANY, ANY, ANY),
        (world.a.pk, ANY, ANY),
        (world.b.pk, world.g1.pk, ANY),
        (ANY, world.g2.pk, ANY),
        (ANY, ANY, world.hr.pk),
        (world.a.pk, world.g1.pk, world.it.pk),
    ]


def _periods(world: World) -> list[Period]:
    ranges = [(FIRST, LAST), (LAST - dt.timedelta(days=4), LAST), (FIRST, FIRST)]
    return [Period(first, last, *cut) for (first, last) in ranges for cut in _cuts(world)]


def test_the_list_equals_the_turn_log_grouped_for_every_cut_and_range(world: World) -> None:
    shown = 0
    for period in _periods(world):
        expected = _turn_log_refused(period)
        assert questions_refused(period=period) == expected, period
        shown += len(expected)
    assert shown > 3 * SHOWN  # the comparison was not between empty lists
    assert len(questions_refused(period=Period(FIRST, LAST))) == SHOWN


def test_month_spans_split_a_period_into_whole_months_and_the_days_around_them() -> None:
    def spans(first: dt.date, last: dt.date) -> tuple[object, ...]:
        months, (head, tail) = month_spans(Period(first, last))
        shown = [span for span in (head, tail) if span[0] <= span[1]]
        return (months if months[0] < months[1] else None, *shown)

    d = dt.date
    assert spans(d(2026, 2, 1), d(2026, 2, 28)) == ((d(2026, 2, 1), d(2026, 3, 1)),)
    assert spans(d(2026, 1, 31), d(2026, 3, 1)) == (
        (d(2026, 2, 1), d(2026, 3, 1)), (d(2026, 1, 31), d(2026, 1, 31)), (d(2026, 3, 1), d(2026, 3, 1))
    )  # fmt: skip
    assert spans(d(2026, 2, 2), d(2026, 3, 30)) == (None, (d(2026, 2, 2), d(2026, 3, 30)))
    assert spans(d(2025, 12, 6), d(2026, 12, 5)) == (
        (d(2026, 1, 1), d(2026, 12, 1)), (d(2025, 12, 6), d(2025, 12, 31)), (d(2026, 12, 1), d(2026, 12, 5))
    )  # fmt: skip


def test_across_months_the_list_equals_the_turn_log_for_every_cut_and_range(
    months_world: World,
) -> None:
    d = dt.date
    ranges = [
        (SPAN_FIRST, SPAN_LAST),  # two whole months and the days around them
        (d(2026, 2, 1), d(2026, 2, 28)),  # exactly one month
        (d(2026, 2, 1), d(2026, 3, 31)),  # two months, no day around them
        (d(2026, 1, 31), d(2026, 3, 1)),  # a month and one day either side
        (d(2026, 2, 15), d(2026, 3, 20)),  # across a month's end, no whole month
    ]
    shown = 0
    for first, last in ranges:
        for cut in _cuts(months_world):
            period = Period(first, last, *cut)
            expected = _turn_log_refused(period)
            assert questions_refused(period=period) == expected, period
            shown += len(expected)
    assert shown > 3 * SHOWN
    assert MonthlyRefusedQuestion.objects.filter(month=d(2026, 2, 1)).exists()


def _months_summed() -> set[tuple[dt.date, int, int, int, int, int]]:
    by_month = (
        DailyRefusedQuestion.objects.annotate(month=TruncMonth("day"))
        .values_list("month", "collection", "group", "category", "question_id")
        .annotate(turns=Sum("turns"))
    )
    return set(by_month)


def _months_stored() -> set[tuple[dt.date, int, int, int, int, int]]:
    return set(
        MonthlyRefusedQuestion.objects.values_list(
            "month", "collection", "group", "category", "question_id", "turns"
        )
    )


def test_month_rows_stay_the_sum_of_their_days_as_days_are_refreshed(months_world: World) -> None:
    assert _months_stored() == _months_summed() != set()
    feb_10 = Period(dt.date(2026, 2, 10), dt.date(2026, 2, 10))
    Turn.objects.filter(period_turns_q(feb_10), refused=True).update(question="Asked once more")
    daily_counts_refresh(day=feb_10.first)
    assert _months_stored() == _months_summed()

    march_day = Period(dt.date(2026, 3, 3), dt.date(2026, 3, 3))
    assert Turn.objects.filter(period_turns_q(march_day), refused=True).exists()
    Turn.objects.filter(period_turns_q(march_day)).update(refused=False)
    daily_counts_refresh(day=march_day.first)
    assert _months_stored() == _months_summed()

    before = _months_stored()
    daily_counts_refresh_range(first=SPAN_FIRST, last=SPAN_LAST)
    assert _months_stored() == before == _months_summed()


def _texts() -> set[str]:
    return set(QuestionText.objects.values_list("text", flat=True))


def _refused_texts() -> set[str]:
    return set(Turn.objects.filter(refused=True).values_list("question", flat=True))


def test_the_texts_stored_are_those_of_refused_turns_counted_and_no_others(world: World) -> None:
    assert _texts() == _refused_texts() != set()
    asked = "Asked on one day only"
    day_turns = Turn.objects.filter(period_turns_q(Period(FIRST, FIRST)), refused=True)
    day_turns.update(question=asked)
    daily_counts_refresh(day=FIRST)
    assert asked in _texts() == _refused_texts()

    day_turns.update(refused=False)
    daily_counts_refresh(day=FIRST)

    assert asked not in _texts() == _refused_texts()


def _stored() -> set[tuple[dt.date, int, int, int, str, int]]:
    return set(
        DailyRefusedQuestion.objects.values_list(
            "day", "collection", "group", "category", "question__text", "turns"
        )
    )


def test_refreshing_again_changes_nothing(world: World) -> None:
    before = _stored()
    daily_counts_refresh_range(first=FIRST, last=LAST)

    assert before and _stored() == before


def test_a_refreshed_day_replaces_its_own_rows_and_no_other_days(world: World) -> None:
    others = {row for row in _stored() if row[0] != FIRST}
    day_turns = Turn.objects.filter(period_turns_q(Period(FIRST, FIRST)), refused=True)
    day_turns.update(question="Asked again, differently")

    daily_counts_refresh(day=FIRST)

    first_day = {row for row in _stored() if row[0] == FIRST}
    uncut = {row for row in first_day if row[1:4] == (ANY, ANY, ANY)}
    assert uncut == {(FIRST, ANY, ANY, ANY, "Asked again, differently", day_turns.count())}
    assert {row[4] for row in first_day} == {"Asked again, differently"}
    assert {row for row in _stored() if row[0] != FIRST} == others


def test_a_day_whose_refusals_are_gone_keeps_no_question_rows(world: World) -> None:
    Turn.objects.filter(period_turns_q(Period(LAST, LAST))).update(refused=False)

    daily_counts_refresh(day=LAST)

    assert not DailyRefusedQuestion.objects.filter(day=LAST).exists()
    assert questions_refused(period=Period(LAST, LAST)) == []


def test_the_database_rejects_a_second_row_for_the_same_question_and_cut(world: World) -> None:
    row = DailyRefusedQuestion.objects.filter(day=FIRST).first()
    assert row is not None
    with pytest.raises(IntegrityError), transaction.atomic():
        DailyRefusedQuestion.objects.create(
            day=row.day, collection=row.collection, group=row.group, category=row.category,
            question=row.question, turns=1,
        )  # fmt: skip
    with pytest.raises(IntegrityError), transaction.atomic():
        DailyRefusedQuestion.objects.create(day=FIRST, question=row.question, turns=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        MonthlyRefusedQuestion.objects.create(
            month=FIRST.replace(day=2), question=row.question, turns=1
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        QuestionText.objects.create(digest="0" * 64, text="A text whose digest this is not")


def test_a_question_longer_than_an_index_entry_is_counted() -> None:
    question = "Why " + "x" * 9000 + "?"
    turn = TurnFactory.create(question=question, refused=True, refusal_reason="Not found")
    day = local_day(turn.created_at)

    daily_counts_refresh(day=day)

    assert questions_refused(period=Period(day, day)) == [QuestionCount(question, 1)]


@pytest.mark.django_db(transaction=True)
def test_a_refresh_waits_for_the_lock_every_day_shares_before_moving_the_month() -> None:
    day = dt.date(2026, 2, 10)
    turn = TurnFactory.create(question="Held back?", refused=True, refusal_reason="Not found")
    Turn.objects.filter(pk=turn.pk).update(
        created_at=dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)
    )
    done = threading.Event()

    def refresh() -> None:
        try:
            daily_counts_refresh(day=day)
        finally:
            connection.close()
            done.set()

    worker = threading.Thread(target=refresh)
    with transaction.atomic(), connection.cursor() as cursor:
        # Another day's refresh, between reading its turns and committing its rows.
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", LOCK)
        worker.start()
        assert not done.wait(1.5)
        assert not MonthlyRefusedQuestion.objects.exists()
    assert done.wait(30)
    worker.join()
    assert _months_stored() == _months_summed() != set()
