"""Reads for the analytics dashboard: one grouped query per panel, never a loop over rows.

The turn and composer panels read `DailyTurnCount`, kept per local day by the turn-end step
and `manage.py analytics_refresh` (pre-aggregated, idempotent counts), so opening the dashboard
costs the same whatever the size of the turn log. Days are local to settings.TIME_ZONE, not to the
request, because the stored rows were cut with it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Sum
from django.utils import timezone

from apps.analytics.models import Category, DailyTurnCount
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import RouterEvaluation

# The DayStats figures (a count per band, named as the band); stored per day and composer,
# summed into days here.
DAY_FIGURES = ("turns", "refused", "rated", "confidence_sum", *(b.value for b in ConfidenceBand))


@dataclass(frozen=True)
class CategoryCount:
    pk: int
    name: str
    active: bool
    conversations: int


@dataclass(frozen=True)
class DayStats:
    day: dt.date
    turns: int = 0
    refused: int = 0
    rated: int = 0  # turns with a confidence value
    confidence_sum: float = 0.0  # a sum, not a mean, so days add up
    green: int = 0
    yellow: int = 0
    red: int = 0

    def band_count(self, band: ConfidenceBand) -> int:
        count: int = getattr(self, band.value)
        return count

    @property
    def unrated(self) -> int:
        return self.turns - sum(self.band_count(band) for band in ConfidenceBand)

    @property
    def refusal_share(self) -> float | None:
        return self.refused / self.turns if self.turns else None

    @property
    def mean_confidence(self) -> float | None:
        return self.confidence_sum / self.rated if self.rated else None


@dataclass(frozen=True)
class ComposerCount:
    composer: str  # "" for turns that composed nothing (clarify, search, failures)
    turns: int
    fallbacks: int


@dataclass(frozen=True)
class Dashboard:
    since: dt.date
    days: tuple[DayStats, ...]
    categories: tuple[CategoryCount, ...]
    composers: tuple[ComposerCount, ...]
    evaluation: RouterEvaluation | None

    @property
    def total(self) -> DayStats:
        """The whole period as one row; the band distribution is read from it."""
        sums: dict[str, Any] = {
            name: sum(getattr(d, name) for d in self.days) for name in DAY_FIGURES
        }
        return DayStats(day=self.since, **sums)


def categories_count() -> list[CategoryCount]:
    """Every category with how many conversations carry it, busiest first."""
    rows = Category.objects.annotate(n=Count("conversations")).order_by("-n", "name")
    return [CategoryCount(c.pk, c.name, c.active, c.n) for c in rows]


def local_day(moment: dt.datetime) -> dt.date:
    """The counting day of a moment (settings.TIME_ZONE, whatever zone is active)."""
    return timezone.localdate(moment, timezone=timezone.get_default_timezone())


def local_day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=timezone.get_default_timezone())


def local_period(*, days: int, now: dt.datetime | None = None) -> tuple[dt.date, dt.date]:
    """First and last day of the `days` local days ending today, both included."""
    today = local_day(now or timezone.now())
    return today - dt.timedelta(days=days - 1), today


def turns_daily(*, days: int = 30, now: dt.datetime | None = None) -> list[DayStats]:
    """One row per local day of the period, oldest first, days without turns included."""
    first, last = local_period(days=days, now=now)
    grouped = (
        DailyTurnCount.objects.filter(day__range=(first, last))
        .order_by()
        .values("day")
        .annotate(**{name: Sum(name) for name in DAY_FIGURES})
    )
    found = {row.pop("day"): row for row in grouped}
    return [
        DayStats(day=day, **found.get(day, {}))
        for day in (first + dt.timedelta(days=n) for n in range(days))
    ]


def composers_count(*, days: int = 30, now: dt.datetime | None = None) -> list[ComposerCount]:
    rows = (
        DailyTurnCount.objects.filter(day__range=local_period(days=days, now=now))
        .order_by()
        .values("composer")
        .annotate(turns=Sum("turns"), fallbacks=Sum("fallbacks"))
        .order_by("-turns", "composer")
    )
    return [ComposerCount(r["composer"], r["turns"], r["fallbacks"]) for r in rows]


def router_evaluation_latest() -> RouterEvaluation | None:
    return RouterEvaluation.objects.order_by("-created_at").first()


def dashboard_get(*, days: int = 30, now: dt.datetime | None = None) -> Dashboard:
    """Four queries whatever the traffic: categories, days, composers, latest evaluation."""
    daily = turns_daily(days=days, now=now)
    return Dashboard(
        since=daily[0].day,
        days=tuple(daily),
        categories=tuple(categories_count()),
        composers=tuple(composers_count(days=days, now=now)),
        evaluation=router_evaluation_latest(),
    )
