"""The backfill migration fills the daily counts from turns stored before they were kept."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Model

from apps.analytics.models import (
    ANY,
    DailyRefusedQuestion,
    DailyTurnCount,
    MonthlyRefusedQuestion,
    QuestionText,
    question_digest,
)
from apps.analytics.services import daily_counts_refresh
from apps.answers.models import Turn
from tests.factories import TurnFactory

BEFORE = [("analytics", "0005_daily_turn_counts")]
# Through the first backfill (per composer), the re-cut by intent that replaced its rows, and
# the category cut, which keeps them as the rows of every category (and the refused questions'
# table and its texts by id, which the refresh writes too).
TEXTS_BY_ID = [("analytics", "0013_question_texts_and_monthly_refused_questions")]
AFTER = TEXTS_BY_ID


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
        # Through the backfill by text and its conversion to the texts' ids.
        _migrate(TEXTS_BY_ID)
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
    return set(uncut.values_list("day", "question__text", "turns"))


# Rows as 0012 stored them: (day, collection, group, category, question, turns)
STORED_BY_TEXT = [
    (dt.date(2026, 1, 31), ANY, ANY, ANY, "Can I?", 2),
    (dt.date(2026, 2, 1), ANY, ANY, ANY, "Can I?", 3),
    (dt.date(2026, 2, 1), 7, ANY, ANY, "Can I?", 1),
    (dt.date(2026, 2, 20), ANY, ANY, ANY, "Can I?", 4),
    (dt.date(2026, 2, 20), ANY, ANY, ANY, "May I? " + "x" * 9000, 1),
    (dt.date(2026, 2, 20), ANY, 3, 5, "Pourquoi pas ?", 2),
]


@pytest.mark.django_db(transaction=True)
def test_the_rows_kept_by_text_move_to_text_ids_and_are_summed_by_month() -> None:
    by_text = ("analytics", "0012_daily_refused_questions")
    _migrate([by_text])
    try:
        old = _historical(by_text, "DailyRefusedQuestion")
        fields = ("day", "collection", "group", "category", "question", "turns")
        old._default_manager.bulk_create(
            old(**dict(zip(fields, row, strict=True))) for row in STORED_BY_TEXT
        )
        _migrate(TEXTS_BY_ID)

        texts = {t.text: t.digest for t in QuestionText.objects.all()}
        assert texts == {row[4]: question_digest(row[4]) for row in STORED_BY_TEXT}
        moved = DailyRefusedQuestion.objects.values_list(
            "day", "collection", "group", "category", "question__text", "turns"
        )
        assert set(moved) == set(STORED_BY_TEXT)
        months = MonthlyRefusedQuestion.objects.values_list(
            "month", "collection", "group", "category", "question__text", "turns"
        )
        assert set(months) == {
            (dt.date(2026, 1, 1), ANY, ANY, ANY, "Can I?", 2),
            (dt.date(2026, 2, 1), ANY, ANY, ANY, "Can I?", 7),
            (dt.date(2026, 2, 1), 7, ANY, ANY, "Can I?", 1),
            (dt.date(2026, 2, 1), ANY, ANY, ANY, "May I? " + "x" * 9000, 1),
            (dt.date(2026, 2, 1), ANY, 3, 5, "Pourquoi pas ?", 2),
        }

        _migrate([by_text])  # and back: the texts return to their rows
        back = _historical(by_text, "DailyRefusedQuestion")._default_manager.values_list(*fields)
        assert set(back) == set(STORED_BY_TEXT)
    finally:
        _migrate(_leaf_nodes())


def _historical(node: tuple[str, str], model: str) -> type[Model]:
    executor = MigrationExecutor(connection)
    return executor.loader.project_state(node).apps.get_model("analytics", model)
