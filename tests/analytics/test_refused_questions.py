"""The "most often refused" list from the pre-aggregated `DailyRefusedQuestion` rows: the same
rows as grouping the turn log by text, kept by the idempotent daily refresh."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from django.db import IntegrityError, transaction
from django.db.models import Count

from apps.analytics.dashboard.question_lists import (
    SHOWN,
    QuestionCount,
    period_turns_q,
    questions_refused,
)
from apps.analytics.dashboard.selectors import Period
from apps.analytics.models import ANY, DailyRefusedQuestion
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


@pytest.fixture
def world() -> World:
    world = world_build()
    readable = itertools.cycle([[world.a.pk], [world.b.pk], None])
    users = [*world.g1.user_set.all(), None]
    for n, question in enumerate(QUESTIONS):
        turn = TurnFactory.create(
            conversation=ConversationFactory.create(user=users[n % len(users)]),
            question=question,
            refused=True,
            refusal_reason="Not in the documents",
            readable_collections=next(readable),
        )
        when = dt.datetime.combine(FIRST + dt.timedelta(days=n % 14), dt.time(12), tzinfo=dt.UTC)
        Turn.objects.filter(pk=turn.pk).update(created_at=when)
        if n % 3 == 0:
            turn.category_decisions.create(category=world.hr, score=0.5, assigned_by="test")
    daily_counts_refresh_range(first=FIRST, last=LAST)
    return world


def _periods(world: World) -> list[Period]:
    cuts = [
        (ANY, ANY, ANY),
        (world.a.pk, ANY, ANY),
        (world.b.pk, world.g1.pk, ANY),
        (ANY, world.g2.pk, ANY),
        (ANY, ANY, world.hr.pk),
        (world.a.pk, world.g1.pk, world.it.pk),
    ]
    ranges = [(FIRST, LAST), (LAST - dt.timedelta(days=4), LAST), (FIRST, FIRST)]
    return [Period(first, last, *cut) for (first, last) in ranges for cut in cuts]


def test_the_list_equals_the_turn_log_grouped_for_every_cut_and_range(world: World) -> None:
    shown = 0
    for period in _periods(world):
        expected = _turn_log_refused(period)
        assert questions_refused(period=period) == expected, period
        shown += len(expected)
    assert shown > 3 * SHOWN  # the comparison was not between empty lists
    assert len(questions_refused(period=Period(FIRST, LAST))) == SHOWN


def _stored() -> set[tuple[dt.date, int, int, int, str, int]]:
    return set(
        DailyRefusedQuestion.objects.values_list(
            "day", "collection", "group", "category", "question", "turns"
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
        DailyRefusedQuestion.objects.create(day=FIRST, question="No turns", turns=0)


def test_a_question_longer_than_an_index_entry_is_counted() -> None:
    question = "Why " + "x" * 9000 + "?"
    turn = TurnFactory.create(question=question, refused=True, refusal_reason="Not found")
    day = local_day(turn.created_at)

    daily_counts_refresh(day=day)

    assert questions_refused(period=Period(day, day)) == [QuestionCount(question, 1)]
