"""Reads for the analytics dashboard: what to chart for a period (`periods.Period`) and how it
compares with the period before.

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

from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, Sum

from apps.analytics.counts.latency import BUCKETS, latency_percentile
from apps.analytics.dashboard.periods import Period, Slot, slot_index, slot_start_sql, slots_for
from apps.analytics.models import (
    ANY,
    DailyCategoryCount,
    DailyDocumentCount,
    DailyLatencyCount,
    DailyTurnCount,
)
from apps.answers.composing.confidence import ConfidenceBand
from apps.corpus.models import Document, DocumentStatus

DOCUMENTS_SHOWN = 10


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


def board_get(*, period: Period, readable: frozenset[int] | None = None) -> Board:
    """Nine queries whatever the period: turns, previous, latency, categories, documents x5.

    `readable` is the viewer's `collection_ids_readable` (None: every collection): documents of
    other collections are left out of the document lists, so no title or collection name the
    rule of collections hides from the viewer is shown. The figures count every turn: counts
    name nothing."""
    slots = slots_for(period)
    slot_of = slot_index(period, slots)
    turn_rows = list(
        period.cut(DailyTurnCount.objects.all())
        .order_by()
        .annotate(slot=slot_start_sql(period))
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
        .annotate(slot=slot_start_sql(period), current=current)
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
        .annotate(slot=slot_start_sql(period))
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
