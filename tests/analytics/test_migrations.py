"""The backfill migration fills the daily counts from turns stored before they were kept."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.analytics.models import DailyTurnCount
from apps.analytics.services import daily_counts_refresh
from apps.answers.models import Turn
from tests.factories import TurnFactory

BEFORE = [("analytics", "0005_daily_turn_counts")]
# Through the first backfill (per composer), the re-cut by intent that replaced its rows, and
# the category cut, which keeps them as the rows of every category.
AFTER = [("analytics", "0011_daily_counts_cut_by_category")]


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
        for day in (dt.date(2026, 3, 1), dt.date(2026, 3, 2)):
            daily_counts_refresh(day=day)  # the service, as the turn-end step would count
        assert backfilled == _rows()
        assert sum(turns for _, _, turns, _ in backfilled) == 3
    finally:
        _migrate(_leaf_nodes())


def _rows() -> list[tuple[dt.date, str, int, int]]:
    return list(DailyTurnCount.objects.values_list("day", "composer", "turns", "refused"))


def _leaf_nodes() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()
