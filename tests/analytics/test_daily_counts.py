"""The daily turn counts on the real PostgreSQL: refresh, the post-turn hook, the dashboard, the command."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from io import StringIO
from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import LazySettings
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.analytics.dashboard.periods import Period
from apps.analytics.dashboard.selectors import Figures, board_get
from apps.analytics.models import ANY, DailyTurnCount
from apps.analytics.services import daily_counts_refresh
from apps.analytics.tasks import daily_counts_task
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Turn, TurnStatus
from apps.answers.turn.cuts import local_day_start
from apps.answers.turn.end_steps import TurnEnd, turn_end_steps_run
from apps.answers.turn.recorder import TurnRecorder
from ragplatform.errors import FailureCode
from tests.factories import TurnFactory

pytestmark = pytest.mark.django_db

NumQueries = Callable[[int], AbstractContextManager[CaptureQueriesContext]]
OnCommit = Callable[..., AbstractContextManager[list[Callable[[], Any]]]]

# The figures these tests count by hand (the cut, feedback and latency counts have their own).
COUNT_FIELDS = (
    "turns",
    "refused",
    "rated",
    "confidence_sum",
    "green",
    "yellow",
    "red",
    "fallbacks",
)
DAY = dt.date(2026, 3, 10)
NOON = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)


def _turn_at(when: dt.datetime, **fields: object) -> Turn:
    turn = TurnFactory.create(**fields)
    Turn.objects.filter(pk=turn.pk).update(created_at=when)  # created_at is auto_now_add
    return turn


def _stored(day: dt.date) -> dict[str, tuple[float, ...]]:
    """The uncut rows (every collection, every group), summed per composer over intents."""
    rows = DailyTurnCount.objects.filter(day=day, collection=ANY, group=ANY)
    found: dict[str, dict[str, float]] = {}
    for row in rows.values(*COUNT_FIELDS, "composer"):
        counts = found.setdefault(row.pop("composer"), dict.fromkeys(COUNT_FIELDS, 0))
        for name in COUNT_FIELDS:
            counts[name] += row[name]
    return {composer: _figures(counts) for composer, counts in found.items()}


def _from_the_log(day: dt.date) -> dict[str, tuple[float, ...]]:
    """The same figures counted by hand over the day's turns, independently of the service."""
    start, end = local_day_start(day), local_day_start(day + dt.timedelta(days=1))
    found: dict[str, dict[str, float]] = {}
    for turn in Turn.objects.filter(created_at__gte=start, created_at__lt=end):
        counts = found.setdefault(turn.composer, dict.fromkeys(COUNT_FIELDS, 0))
        counts["turns"] += 1
        counts["refused"] += turn.refused
        counts["rated"] += turn.confidence is not None
        counts["confidence_sum"] += turn.confidence or 0.0
        counts["fallbacks"] += bool(turn.fallback_reason)
        if turn.confidence_band:
            counts[turn.confidence_band] += 1
    return {composer: _figures(counts) for composer, counts in found.items()}


def _figures(row: dict[str, Any]) -> tuple[float, ...]:
    # Rounded: PostgreSQL and Python may add the confidences in a different order.
    return tuple(round(row[f], 9) for f in COUNT_FIELDS)


def _mixed_day() -> None:
    _turn_at(NOON, confidence=0.9, confidence_band="green")
    _turn_at(NOON, confidence=0.5, confidence_band="yellow", fallback_reason="chat model timed out")
    _turn_at(NOON, confidence=0.1, confidence_band="red", refused=True, composer="openai:smollm2")
    _turn_at(NOON, confidence=None, confidence_band="", action="clarify", composer="")
    _turn_at(NOON + dt.timedelta(days=1), composer="next-day")  # another day, not counted here


# --- The refresh -----------------------------------------------------------------------------


def test_refresh_equals_the_turn_log_and_running_it_again_changes_nothing() -> None:
    _mixed_day()

    counted = daily_counts_refresh(day=DAY)
    first = _stored(DAY)
    again = daily_counts_refresh(day=DAY)

    assert first == _from_the_log(DAY)
    assert set(first) == {"extractive", "openai:smollm2", ""}
    assert first["extractive"][:3] == (2, 0, 2) and first["extractive"][-1] == 1
    assert counted == again and (counted.turns, counted.composers) == (4, 3)
    assert _stored(DAY) == first and DailyTurnCount.objects.count() == 3  # replaced, not added


def test_refresh_follows_deletions_down_to_an_empty_day() -> None:
    _mixed_day()
    daily_counts_refresh(day=DAY + dt.timedelta(days=1))
    daily_counts_refresh(day=DAY)

    Turn.objects.filter(composer="openai:smollm2").delete()
    daily_counts_refresh(day=DAY)
    assert set(_stored(DAY)) == {"extractive", ""} and _stored(DAY) == _from_the_log(DAY)

    Turn.objects.filter(created_at__date=DAY).delete()
    emptied = daily_counts_refresh(day=DAY)
    assert (emptied.turns, emptied.composers) == (0, 0) and _stored(DAY) == {}
    assert set(_stored(DAY + dt.timedelta(days=1))) == {"next-day"}  # other days untouched


def test_a_day_without_turns_stores_no_rows() -> None:
    _turn_at(NOON)

    counted = daily_counts_refresh(day=DAY - dt.timedelta(days=1))

    assert (counted.turns, counted.composers) == (0, 0)
    assert not DailyTurnCount.objects.exists()


def test_days_are_local_to_the_configured_time_zone(settings: LazySettings) -> None:
    settings.TIME_ZONE = "Asia/Tehran"  # UTC+03:30 all year
    _turn_at(dt.datetime(2026, 3, 10, 20, 29, tzinfo=dt.UTC), composer="late")  # 23:59
    _turn_at(dt.datetime(2026, 3, 10, 20, 31, tzinfo=dt.UTC), composer="early")  # 00:01 next day

    # A request's active zone must not move the days the stored rows were cut with.
    with timezone.override("America/New_York"):
        daily_counts_refresh(day=DAY)
        daily_counts_refresh(day=DAY + dt.timedelta(days=1))

    assert set(_stored(DAY)) == {"late"} and set(_stored(DAY + dt.timedelta(days=1))) == {"early"}
    board = board_get(period=Period(DAY, DAY + dt.timedelta(days=1)))
    slots = [(s.first, f.turns) for s, f in zip(board.slots, board.series, strict=True)]
    assert slots == [(DAY, 1), (DAY + dt.timedelta(days=1), 1)]


def test_the_database_rejects_inconsistent_counts() -> None:
    figures = dict.fromkeys(COUNT_FIELDS, 0) | {"turns": 1, "refused": 2}

    with pytest.raises(IntegrityError), transaction.atomic():
        DailyTurnCount.objects.create(day=DAY, **figures)
    with pytest.raises(IntegrityError), transaction.atomic():
        DailyTurnCount.objects.create(day=DAY, **(figures | {"refused": 0, "turns": 0}))


# --- The dashboard reads the counts ----------------------------------------------------------


def test_dashboard_reads_the_counts_not_the_turn_log(django_assert_num_queries: NumQueries) -> None:
    _mixed_day()
    daily_counts_refresh(day=DAY)
    week = Period(DAY - dt.timedelta(days=6), DAY)

    # turns, previous period, latency, categories, most cited, never cited and failed or
    # waiting (a list and a count each)
    with django_assert_num_queries(9):
        before = board_get(period=week)
    _turn_at(NOON, composer="unseen", refused=True)
    unrefreshed = board_get(period=week)
    daily_counts_refresh(day=DAY)
    after = board_get(period=week)

    assert before.total.turns == 4 and before.series[-1].refused == 1
    assert unrefreshed == before
    assert after.total.turns == 5 and after.series[-1].refused == 2
    assert ("unseen", 1, 0) in after.composers
    assert [f.turns for f in after.series[:-1]] == [0] * 6  # days without rows still appear


# --- Kept current after each turn ------------------------------------------------------------


def test_an_ended_turn_refreshes_its_day(
    settings: LazySettings,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: OnCommit,
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    # The classification step is tested elsewhere; keep its model loading out of this test.
    monkeypatch.setattr(
        "apps.analytics.tasks.post_turn_task", SimpleNamespace(enqueue=lambda turn_id: None)
    )
    turn = _turn_at(NOON - dt.timedelta(days=3), confidence=0.7, confidence_band="yellow")

    with django_capture_on_commit_callbacks(execute=True):
        turn_end_steps_run(TurnEnd(turn.pk, TurnStatus.FINISHED))  # as `turn_end` does

    assert _stored(DAY - dt.timedelta(days=3)) == {"extractive": (1, 0, 1, 0.7, 0, 1, 0, 0)}


@pytest.mark.parametrize("code", [FailureCode.MODEL_TIMEOUT, FailureCode.CANCELLED])
def test_a_failed_or_cancelled_turn_is_counted_when_it_ends(
    code: FailureCode,
    settings: LazySettings,
    django_capture_on_commit_callbacks: OnCommit,
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    turn = _turn_at(NOON, composer="", confidence=None, confidence_band="")

    with django_capture_on_commit_callbacks(execute=True):
        async_to_sync(TurnRecorder(turn.pk).fail)(code, "the model stopped answering")

    assert Turn.objects.get(pk=turn.pk).status in {TurnStatus.FAILED, TurnStatus.CANCELLED}
    assert _stored(DAY) == _from_the_log(DAY)
    assert sum(row[0] for row in _stored(DAY).values()) == 1


def test_a_failing_refresh_is_logged_and_leaves_the_turn_alone(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    turn = _turn_at(NOON)

    def explode(**kwargs: object) -> None:
        raise RuntimeError("database went away")

    monkeypatch.setattr("apps.analytics.tasks.daily_counts_refresh_for_turn", explode)
    with caplog.at_level(logging.ERROR, logger="apps.analytics.tasks"):
        daily_counts_task.call(turn.pk)

    assert f"daily counts failed for turn {turn.pk}" in caplog.text
    assert Turn.objects.get(pk=turn.pk).answer == turn.answer


def test_a_deleted_turn_refreshes_nothing() -> None:
    turn = _turn_at(NOON)
    Turn.objects.filter(pk=turn.pk).delete()

    daily_counts_task.call(turn.pk)

    assert not DailyTurnCount.objects.exists()


# --- The command -----------------------------------------------------------------------------


def test_command_rebuilds_the_last_days_and_reports_json() -> None:
    now = timezone.now()
    today = timezone.localdate(now)
    _turn_at(now, refused=True)
    _turn_at(now - dt.timedelta(days=2), composer="openai:smollm2")
    _turn_at(now - dt.timedelta(days=5))  # outside --days 3
    out = StringIO()

    call_command("analytics_refresh", "--days", "3", "--json", stdout=out)

    report = json.loads(out.getvalue())
    assert report["first"] == (today - dt.timedelta(days=2)).isoformat()
    assert report["last"] == today.isoformat() and report["turns"] == 2
    assert [d["turns"] for d in report["days"]] == [1, 0, 1]
    assert report["days"][0] == {
        "day": report["first"],
        "turns": 1,
        "composers": 1,
    }
    assert set(DailyTurnCount.objects.values_list("day", flat=True)) == {
        today,
        today - dt.timedelta(days=2),
    }


def test_command_writes_a_line_and_refuses_no_days() -> None:
    out = StringIO()

    call_command("analytics_refresh", stdout=out)

    assert out.getvalue().startswith("Refreshed 30 days,") and ": 0 turns" in out.getvalue()
    with pytest.raises(CommandError, match="at least 1"):
        call_command("analytics_refresh", "--days", "0")


def test_every_confidence_band_is_counted_per_day_and_shown() -> None:
    count_fields = {f.name for f in DailyTurnCount._meta.get_fields()}
    for band in ConfidenceBand:
        assert band.value in count_fields and band.value in COUNT_FIELDS
        bands: dict[str, Any] = {band.value: 2}
        assert Figures(**bands).band_count(band) == 2
    assert Figures(turns=5, green=1, red=2).unrated == 2
