"""The backfill migration fills the daily counts from turns stored before they were kept."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.analytics.models import ANY, DailyRefusedQuestion, DailyTurnCount
from apps.analytics.services import daily_counts_refresh
from apps.answers.models import Turn
from tests.factories import TurnFactory

BEFORE = [("analytics", "0005_daily_turn_counts")]
# Through the first backfill (per composer), the re-cut by intent that replaced its rows, and
# the category cut, which keeps them as the rows of every category (and the refused questions'
# table, which the refresh writes too).
AFTER = [("analytics", "0012_daily_refused_questions")]


def _migrate(targets: list[tuple[str, str]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.mark.django_db(transaction=True)
def test_backfill_counts_the_turns_already_stored() -> None:
    _migrate(BEFORE)
    try:
        days = [dt.datetime(2026, 3, d, 12, tzinfo=dt.UTC) for d in (1, 1, 2)]
        for n, when in enumerate(days):
            turn = TurnFactory.create(refused=n == 2, confidence=0.5, confidence_band="yellow")
            Turn.objects.filter(pk=turn.pk).update(created_at=when)
        _migrate(AFTER)
        backfilled = _rows()
        for refreshed in (dt.date(2026, 3, 1), dt.date(2026, 3, 2)):
            daily_counts_refresh(day=refreshed)  # the service, as the turn-end step would count
        assert backfilled == _rows()
        assert sum(turns for _, _, turns, _ in backfilled) == 3
    finally:
        _migrate(_leaf_nodes())


def _rows() -> list[tuple[dt.date, str, int, int]]:
    return list(DailyTurnCount.objects.values_list("day", "composer", "turns", "refused"))


def _leaf_nodes() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_backfill_counts_the_refused_questions_already_stored() -> None:
    _migrate([("analytics", "0011_daily_counts_cut_by_category")])
    try:
        asked = [(1, "Can I?", True), (1, "Can I?", True), (1, "May I?", True), (2, "Can I?", True)]
        for day, question, refused in [*asked, (2, "Answered", False)]:
            turn = TurnFactory.create(question=question, refused=refused)
            when = dt.datetime(2026, 3, day, 12, tzinfo=dt.UTC)
            Turn.objects.filter(pk=turn.pk).update(created_at=when)
        _migrate([("analytics", "0012_daily_refused_questions")])
        backfilled = _refused_rows()
        for refreshed in (dt.date(2026, 3, 1), dt.date(2026, 3, 2)):
            daily_counts_refresh(day=refreshed)
        # The refresh adds the cuts; its uncut rows are the backfilled ones.
        assert (
            backfilled
            == _refused_rows()
            == {
                (dt.date(2026, 3, 1), "Can I?", 2),
                (dt.date(2026, 3, 1), "May I?", 1),
                (dt.date(2026, 3, 2), "Can I?", 1),
            }
        )
    finally:
        _migrate(_leaf_nodes())


def _refused_rows() -> set[tuple[dt.date, str, int]]:
    uncut = DailyRefusedQuestion.objects.filter(collection=ANY, group=ANY, category=ANY)
    return set(uncut.values_list("day", "question", "turns"))
