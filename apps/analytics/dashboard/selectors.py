"""Reads for the analytics dashboard: a period, its previous period, and what to chart.

Every figure comes from the pre-aggregated daily counts (`models.Daily*Count`, kept by
`services.daily_counts_refresh`), one query per table grouped by chart slot (day, week or
month), so a year costs the same few queries as a week and about as few rows. The two question
lists are in `question_lists.py`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.functions import TruncMonth, TruncWeek

from apps.analytics.counts.latency import BUCKETS, latency_percentile
from apps.analytics.models import (
    ANY,
    DailyCategoryCount,
    DailyDocumentCount,
    DailyLatencyCount,
    DailyTurnCount,
)
from apps.answers.composing.confidence import ConfidenceBand
from apps.corpus.models import Document, DocumentStatus

PRESET_DAYS = (7, 30, 90, 365)
# Periods up to this many days are charted by day, then by week up to the second, then by month.
DAY_SLOTS_UP_TO, WEEK_SLOTS_UP_TO = 62, 183
DOCUMENTS_SHOWN = 10


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
class Figures:
    """Sums over any set of count rows; means and percentiles are read from them."""

    turns: int = 0
    refused: int = 0
    rated: int = 0
    confidence_sum: float = 0.0
    green: int = 0
    yellow: int = 0
    red: int = 0
    fallbacks: int = 0
    feedback_up: int = 0
    feedback_down: int = 0
    latency: tuple[int, ...] = (0,) * BUCKETS

    def __add__(self, other: Figures) -> Figures:
        summed = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in _SUMMED}
        latency = tuple(a + b for a, b in zip(self.latency, other.latency, strict=True))
        return Figures(**summed, latency=latency)

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

    @property
    def p50_ms(self) -> float | None:
        return latency_percentile(self.latency, 0.5)

    @property
    def p95_ms(self) -> float | None:
        return latency_percentile(self.latency, 0.95)


_SUMMED = tuple(f for f in fields(Figures) if f.name != "latency")
_SUMMED_NAMES = tuple(f.name for f in _SUMMED)
TURN_SUMS = {f.name: Sum(f.name) for f in _SUMMED}


@dataclass(frozen=True)
class Slot:
    """One point of a chart: a day, a week or a month, clipped to the period."""

    first: dt.date
    last: dt.date
    label: str


@dataclass(frozen=True)
class Line:
    """One named series over the slots (an intent, a category), with its period totals."""

    key: str
    label: str
    counts: tuple[int, ...]
    extra: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True)
class DocumentCount:
    pk: int
    title: str
    collection: str
    turns: int


@dataclass(frozen=True)
class DocumentState:
    """A document that cannot be cited yet or at all: its status and why it failed."""

    pk: int
    title: str
    collection: str
    status: str
    error: str


@dataclass(frozen=True)
class Board:
    period: Period
    slots: tuple[Slot, ...]
    series: tuple[Figures, ...]  # one per slot
    total: Figures
    previous: Figures
    intents: tuple[Line, ...]
    categories: tuple[Line, ...]  # extra: refused, feedback_up, feedback_down
    composers: tuple[tuple[str, int, int], ...]  # composer, turns, fallbacks
    documents_top: tuple[DocumentCount, ...]
    documents_never: tuple[DocumentCount, ...]  # ready documents only
    documents_never_total: int
    documents_unready: tuple[DocumentState, ...]  # failed or waiting: they could not be cited
    documents_unready_total: int


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


def board_get(*, period: Period, readable: frozenset[int] | None = None) -> Board:
    """Nine queries whatever the period: turns, previous, latency, categories, documents x5.

    `readable` is the viewer's `collection_ids_readable` (None: every collection): documents of
    other collections are left out of the document lists, so no title or collection name the
    rule of collections hides from the viewer is shown. The figures count every turn: counts
    name nothing."""
    slots = slots_for(period)
    slot_of = _slot_index(period, slots)
    turn_rows = list(
        period.cut(DailyTurnCount.objects.all())
        .order_by()
        .annotate(slot=_slot_start_sql(period))
        .values("slot", "intent", "composer")
        .annotate(**TURN_SUMS)
    )
    latency, previous_latency = _latency(period, slot_of, len(slots))
    series = _series(turn_rows, slot_of, len(slots), latency)
    return Board(
        period=period,
        slots=tuple(slots),
        series=series,
        total=sum(series, Figures()),
        previous=_previous(period.previous(), previous_latency),
        intents=tuple(_lines(turn_rows, "intent", slot_of, len(slots))),
        categories=tuple(_categories(period, slot_of, len(slots))),
        composers=_composers(turn_rows),
        **_documents(period, readable),
    )


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


def _slot_start_sql(period: Period) -> Any:
    """A count row's slot as SQL: the start of its day, week (from Monday, as PostgreSQL's
    `date_trunc` counts weeks) or month, as `slots_for` starts them. The database sums the
    rows of a slot, so a year hands Python a dozen rows per line, not one per day."""
    if period.days <= DAY_SLOTS_UP_TO:
        return F("day")
    return TruncWeek("day") if period.days <= WEEK_SLOTS_UP_TO else TruncMonth("day")


def _slot_index(period: Period, slots: Sequence[Slot]) -> dict[dt.date, int]:
    """The slot of each slot start `_slot_start_sql` gives, and of every day (a clipped first
    slot starts before the period)."""
    index = {day: n for n, slot in enumerate(slots) for day in _days(slot.first, slot.last)}
    return index | {_first_slot_start(period): 0}


def _figures(row: Mapping[str, Any], latency: tuple[int, ...] | None = None) -> Figures:
    sums = {f.name: row.get(f.name) or 0 for f in _SUMMED}
    return Figures(**sums, latency=latency or (0,) * BUCKETS)


def _series(
    rows: Iterable[Mapping[str, Any]],
    slot_of: Mapping[dt.date, int],
    size: int,
    latency: Sequence[tuple[int, ...]],
) -> tuple[Figures, ...]:
    # Summed as plain numbers, one Figures per slot at the end: a month has ten rows a day.
    sums: list[Counter[str]] = [Counter() for _ in range(size)]
    for row in rows:
        slot = sums[slot_of[row["slot"]]]
        for name in _SUMMED_NAMES:
            slot[name] += row[name] or 0
    return tuple(_figures(sums[n], latency[n]) for n in range(size))


def _previous(period: Period, latency: tuple[int, ...]) -> Figures:
    row = period.cut(DailyTurnCount.objects.all()).aggregate(**TURN_SUMS)
    return _figures(row, latency)


def _latency(
    period: Period, slot_of: Mapping[dt.date, int], size: int
) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """Per slot and for the previous period, from one query over both periods (a month can
    hold days of both, so each row says which period it sums)."""
    both = replace(period, first=period.previous().first)
    current = ExpressionWrapper(Q(day__gte=period.first), output_field=BooleanField())
    rows = (
        both.cut(DailyLatencyCount.objects.all())
        .order_by()
        .annotate(slot=_slot_start_sql(period), current=current)
        .values_list("slot", "current", "bucket")
        .annotate(Sum("turns"))
    )
    slots = [[0] * BUCKETS for _ in range(size)]
    previous = [0] * BUCKETS
    for slot, is_current, bucket, turns in rows:
        counts = slots[slot_of[slot]] if is_current else previous
        counts[bucket] += turns
    return [tuple(s) for s in slots], tuple(previous)


def _lines(
    rows: Iterable[Mapping[str, Any]], key: str, slot_of: Mapping[dt.date, int], size: int
) -> list[Line]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * size)
    for row in rows:
        counts[row[key]][slot_of[row["slot"]]] += row["turns"]
    lines = [Line(k, k or "(not classified)", tuple(c)) for k, c in counts.items()]
    return sorted(lines, key=lambda line: (-line.total, line.label))


def _categories(period: Period, slot_of: Mapping[dt.date, int], size: int) -> list[Line]:
    rows = (
        period.cut_categories(DailyCategoryCount.objects.all())
        .order_by()
        .annotate(slot=_slot_start_sql(period))
        .values("slot", "category_id", "category__name")
        .annotate(
            turns=Sum("turns"),
            refused=Sum("refused"),
            up=Sum("feedback_up"),
            down=Sum("feedback_down"),
        )
    )
    counts: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0] * size)
    extra: dict[tuple[int, str], dict[str, int]] = defaultdict(
        lambda: {"refused": 0, "feedback_up": 0, "feedback_down": 0}
    )
    for row in rows:
        key = (row["category_id"], row["category__name"])
        counts[key][slot_of[row["slot"]]] += row["turns"]
        for name, column in (
            ("refused", "refused"),
            ("feedback_up", "up"),
            ("feedback_down", "down"),
        ):
            extra[key][name] += row[column]
    lines = [Line(str(pk), name, tuple(c), extra[(pk, name)]) for (pk, name), c in counts.items()]
    return sorted(lines, key=lambda line: (-line.total, line.label))


def _composers(rows: Iterable[Mapping[str, Any]]) -> tuple[tuple[str, int, int], ...]:
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        found[row["composer"]][0] += row["turns"]
        found[row["composer"]][1] += row["fallbacks"]
    return tuple(sorted(((c, t, f) for c, (t, f) in found.items()), key=lambda r: (-r[1], r[0])))


def _documents(period: Period, readable: frozenset[int] | None) -> dict[str, Any]:
    """The most cited documents, and those never cited in the period (of the collection)."""
    cited = period.cut(DailyDocumentCount.objects.all())
    documents = Document.objects.all()
    if readable is not None:
        cited = cited.filter(document__collection_id__in=readable)
        documents = documents.filter(collection_id__in=readable)
    if period.collection != ANY:
        # Turns that could read the collection may cite others they could read too: list only
        # the collection's own documents.
        cited = cited.filter(document__collection_id=period.collection)
        documents = documents.filter(collection_id=period.collection)
    top = (
        cited.order_by()
        .values(
            "document_id", "document__title", "document__filename", "document__collection__name"
        )
        .annotate(turns=Sum("turns"))
        .order_by("-turns", "document__title")[:DOCUMENTS_SHOWN]
    )
    # A failed or waiting document has no chunks to cite: it is listed apart, with its status,
    # so "never cited" says something about the documents readers could have been shown.
    ready = documents.filter(status=DocumentStatus.READY)
    never = ready.exclude(Exists(cited.filter(document_id=OuterRef("pk")))).select_related(
        "collection"
    )
    unready = documents.exclude(status=DocumentStatus.READY).select_related("collection")
    return {
        "documents_top": tuple(
            DocumentCount(
                r["document_id"],
                r["document__title"] or r["document__filename"],
                r["document__collection__name"],
                r["turns"],
            )
            for r in top
        ),
        "documents_never": tuple(
            DocumentCount(d.pk, d.title or d.filename, d.collection.name, 0)
            for d in never.order_by("title", "filename")[:DOCUMENTS_SHOWN]
        ),
        "documents_never_total": never.count(),
        "documents_unready": tuple(
            DocumentState(d.pk, d.title or d.filename, d.collection.name, d.status, d.error_message)
            for d in unready.order_by("status", "title", "filename")[:DOCUMENTS_SHOWN]
        ),
        "documents_unready_total": unready.count(),
    }
