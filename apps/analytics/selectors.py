"""Reads for the analytics dashboard: one grouped query per panel, never a loop over rows.

Scale note (CONVENTIONS item 10): `turns_daily` and `composers_count` aggregate the turn log
itself, which is fine for months of traffic on the indexed `created_at` but not for years of
it. Past that, an idempotent step (`stats_refresh(day=...)`, run after each turn for today and
nightly for yesterday) would upsert one `DailyTurnStats` row per day holding exactly the
columns `turns_daily` returns (turns, refused, rated, confidence sum, one count per band, per
composer and fallback counts), and these two selectors would read those rows instead; the
dataclasses below are already that shape, so the dashboard would not change.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from apps.analytics.models import Category, RouterEvaluation
from apps.answers.models import Turn

BANDS = ("green", "yellow", "red")


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
        return DayStats(
            day=self.since,
            turns=sum(d.turns for d in self.days),
            refused=sum(d.refused for d in self.days),
            rated=sum(d.rated for d in self.days),
            confidence_sum=sum(d.confidence_sum for d in self.days),
            green=sum(d.green for d in self.days),
            yellow=sum(d.yellow for d in self.days),
            red=sum(d.red for d in self.days),
        )


def categories_count() -> list[CategoryCount]:
    """Every category with how many conversations carry it, busiest first."""
    rows = Category.objects.annotate(n=Count("conversations")).order_by("-n", "name")
    return [CategoryCount(c.pk, c.name, c.active, c.n) for c in rows]


def _period_start(*, days: int, now: dt.datetime | None) -> dt.datetime:
    today = timezone.localdate(now or timezone.now())
    first = today - dt.timedelta(days=days - 1)
    return dt.datetime.combine(first, dt.time.min, tzinfo=timezone.get_current_timezone())


def turns_daily(*, days: int = 30, now: dt.datetime | None = None) -> list[DayStats]:
    """One row per local day of the period, oldest first, days without turns included."""
    since = _period_start(days=days, now=now)
    grouped = (
        Turn.objects.filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .order_by()
        .values("day")
        .annotate(
            turns=Count("pk"),
            refused=Count("pk", filter=Q(refused=True)),
            rated=Count("confidence"),
            confidence_sum=Sum("confidence", default=0.0),
            **{band: Count("pk", filter=Q(confidence_band=band)) for band in BANDS},
        )
    )
    found = {row.pop("day"): row for row in grouped}
    first = since.date()
    return [
        DayStats(day=day, **found.get(day, {}))
        for day in (first + dt.timedelta(days=n) for n in range(days))
    ]


def composers_count(*, days: int = 30, now: dt.datetime | None = None) -> list[ComposerCount]:
    rows = (
        Turn.objects.filter(created_at__gte=_period_start(days=days, now=now))
        .order_by()
        .values("composer")
        .annotate(turns=Count("pk"), fallbacks=Count("pk", filter=~Q(fallback_reason="")))
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
