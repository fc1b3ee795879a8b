"""The dashboard's period and its chart slots: local days with the cuts a reader chose, and the
days, weeks or months a chart shows, in Python (`slots_for`) and as the SQL that sums count rows
per slot (`slot_start_sql`), which must start slots on the same days."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import F, QuerySet
from django.db.models.functions import TruncMonth, TruncWeek

from apps.analytics.models import ANY

PRESET_DAYS = (7, 30, 90, 365)
# Periods up to this many days are charted by day, then by week up to the second, then by month.
DAY_SLOTS_UP_TO, WEEK_SLOTS_UP_TO = 62, 183


@dataclass(frozen=True)
class Period:
    """Local days `first` to `last`, both included, cut by a collection, a group and a category
    decided at the turn (each ANY when not cut)."""

    first: dt.date
    last: dt.date
    collection: int = ANY
    group: int = ANY
    category: int = ANY

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    def previous(self) -> Period:
        """The same number of days just before, with the same cuts."""
        last = self.first - dt.timedelta(days=1)
        return replace(self, first=last - dt.timedelta(days=self.days - 1), last=last)

    def cut(self, rows: QuerySet[Any]) -> QuerySet[Any]:
        """Rows of a table cut by category as well (turns, latency, documents)."""
        return self._days_and_audience(rows).filter(category=self.category)

    def cut_categories(self, rows: QuerySet[Any]) -> QuerySet[Any]:
        """`DailyCategoryCount` rows: their category is the cut, so a filter picks its rows."""
        rows = self._days_and_audience(rows)
        return rows if self.category == ANY else rows.filter(category_id=self.category)

    def _days_and_audience(self, rows: QuerySet[Any]) -> QuerySet[Any]:
        return rows.filter(
            day__range=(self.first, self.last), collection=self.collection, group=self.group
        )


@dataclass(frozen=True)
class Slot:
    """One point of a chart: a day, a week or a month, clipped to the period."""

    first: dt.date
    last: dt.date
    label: str


def slots_for(period: Period) -> list[Slot]:
    """Days up to two months, weeks (from Monday) up to half a year, then months."""
    if period.days <= DAY_SLOTS_UP_TO:
        return [Slot(d, d, f"{d:%b %d}") for d in _days(period.first, period.last)]
    starts = [_first_slot_start(period)]
    if period.days <= WEEK_SLOTS_UP_TO:
        step, label = (lambda d: d + dt.timedelta(days=7)), "week of %b %d"
    else:
        step, label = next_month, "%b %Y"
    while (following := step(starts[-1])) <= period.last:
        starts.append(following)
    return [
        Slot(
            max(start, period.first),
            min(step(start) - dt.timedelta(days=1), period.last),
            f"{start:{label}}",
        )
        for start in starts
    ]


def _days(first: dt.date, last: dt.date) -> Iterable[dt.date]:
    return (first + dt.timedelta(days=n) for n in range((last - first).days + 1))


def next_month(day: dt.date) -> dt.date:
    return (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def _first_slot_start(period: Period) -> dt.date:
    """Where the first slot would start if the period did not clip it."""
    if period.days <= DAY_SLOTS_UP_TO:
        return period.first
    if period.days <= WEEK_SLOTS_UP_TO:
        return period.first - dt.timedelta(days=period.first.weekday())
    return period.first.replace(day=1)


def slot_start_sql(period: Period) -> Any:
    """A count row's slot as SQL: the start of its day, week (from Monday, as PostgreSQL's
    `date_trunc` counts weeks) or month, as `slots_for` starts them. The database sums the
    rows of a slot, so a year hands Python a dozen rows per line, not one per day."""
    if period.days <= DAY_SLOTS_UP_TO:
        return F("day")
    return TruncWeek("day") if period.days <= WEEK_SLOTS_UP_TO else TruncMonth("day")


def slot_index(period: Period, slots: Sequence[Slot]) -> dict[dt.date, int]:
    """The slot of each slot start `slot_start_sql` gives, and of every day (a clipped first
    slot starts before the period)."""
    index = {day: n for n, slot in enumerate(slots) for day in _days(slot.first, slot.last)}
    return index | {_first_slot_start(period): 0}
