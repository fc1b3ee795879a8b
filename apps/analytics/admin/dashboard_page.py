"""The dashboard page's pieces: the period form, links to the turns behind each figure, the
charts and tables built from a `dashboard.Board`, and the CSV of what the page shows.

`categories.CategoryAdmin.dashboard_view` gates and calls these; the reads are in
`dashboard/selectors.py` and `dashboard/question_lists.py`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import timezone
from django.utils.http import urlencode

from apps.analytics.dashboard.charts import Segment, Series, bars_svg, colour_at, lines_svg
from apps.analytics.dashboard.periods import PRESET_DAYS, Period, Slot
from apps.analytics.dashboard.question_lists import QuestionCount
from apps.analytics.dashboard.selectors import Board, Figures, Line
from apps.analytics.models import ANY, Category
from apps.answers.admin.display import BAND_COLOURS
from apps.answers.admin.filters import TurnListParam as P
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.turn.cuts import local_day
from apps.corpus.access import Reader, collections_readable
from apps.corpus.models import Collection

CUSTOM = "custom"
CUTS = ("collection", "group", "category")  # the form's fields, named as `Period`'s cuts
DEFAULT_DAYS = 30
LINES_SHOWN = 8  # intents or categories charted and tabled; the rest stay in the totals
ANSWERED, REFUSED = "#60a5fa", "#f87171"


class PeriodForm(forms.Form):
    """The dashboard's query string: a preset or custom days, and the three cuts."""

    range = forms.ChoiceField(
        choices=[(str(d), f"{d} days") for d in PRESET_DAYS] + [(CUSTOM, "custom")],
        required=False,
    )
    day_from = forms.DateField(required=False, label="from")
    day_to = forms.DateField(required=False, label="to")
    collection = forms.ModelChoiceField(
        Collection.objects.none(), required=False, empty_label="every collection"
    )
    group = forms.ModelChoiceField(
        Group.objects.order_by("name"), required=False, empty_label="every group"
    )
    # Inactive categories too: their past turns are still counted under them.
    category = forms.ModelChoiceField(
        Category.objects.order_by("name"), required=False, empty_label="every category"
    )

    def __init__(self, data: Any, *, user: Reader) -> None:
        super().__init__(data)
        # Only the collections the viewer may read are offered, or accepted: a private
        # collection's name is what the collection rule hides, and so is its count.
        readable = collections_readable(user=user).order_by("name")
        self.fields["collection"].queryset = readable  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        # Errors are set on the field they are about, so the template shows each beside its
        # field and `period()` still reads every other field that was valid.
        data = super().clean() or {}
        if not self._is_custom(data) or {"day_from", "day_to"} & set(self.errors):
            return data
        first, last = data.get("day_from"), data.get("day_to") or local_day(timezone.now())
        longest = settings.RAG_DASHBOARD_MAX_DAYS
        if first is None:
            self.add_error("day_from", "A custom range needs a first day.")
        elif first > last:
            self.add_error("day_to", "The first day must not be after the last.")
        elif (last - first).days >= longest:
            self.add_error("day_to", f"A range is at most {longest} days.")
        return data

    def _is_custom(self, data: Mapping[str, Any]) -> bool:
        # Days typed in win over the preset the form carries along in `range`.
        days_given = any(self.data.get(name) for name in ("day_from", "day_to"))
        return days_given or data.get("range") == CUSTOM

    def period(self, *, today: dt.date) -> Period:
        """The period asked for, from whatever was valid: an invalid cut is dropped, and an
        invalid custom range falls back to the preset (or the default)."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        cuts = {name: chosen.pk if (chosen := data.get(name)) else ANY for name in CUTS}
        if self._is_custom_valid():
            return Period(data["day_from"], data.get("day_to") or today, **cuts)
        return Period(today - dt.timedelta(days=self.preset_days() - 1), today, **cuts)

    def range_value(self, period: Period, *, today: dt.date) -> str:
        """What the form carries along in `range`: the preset shown, or "custom"."""
        preset = self.preset_days()
        is_preset = period.last == today and period.days == preset
        return str(preset) if is_preset and not self._is_custom_valid() else CUSTOM

    def _is_custom_valid(self) -> bool:
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        return bool(data.get("day_from")) and not {"day_from", "day_to"} & set(self.errors)

    def preset_days(self) -> int:
        chosen = (self.cleaned_data if hasattr(self, "cleaned_data") else {}).get("range")
        return int(chosen) if chosen and chosen != CUSTOM else DEFAULT_DAYS


@dataclass(frozen=True)
class TurnLinks:
    """Links to the turn list with the period's filters; none for a reader who may not see turns.

    A month of charts and tables carries about a thousand links, most repeating the same few
    filters, so each `name=value` is encoded once per page (as `urlencode` would encode it)."""

    base: str  # the turn list's URL, or "" without the permission
    period: Period
    _encoded: dict[tuple[str, str | int, type], str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def href(
        self,
        params: Mapping[str, str | int] | None = None,
        *,
        first: dt.date | None = None,
        last: dt.date | None = None,
    ) -> str:
        if not self.base:
            return ""
        query: dict[str, str | int] = {
            P.DAY_FROM: (first or self.period.first).isoformat(),
            P.DAY_TO: (last or self.period.last).isoformat(),
        }
        if self.period.collection != ANY:
            query[P.COLLECTION] = self.period.collection
        if self.period.group != ANY:
            query[P.GROUP] = self.period.group
        if self.period.category != ANY:
            query[P.CATEGORY] = self.period.category
        pairs = {**query, **(params or {})}.items()
        return f"{self.base}?{'&'.join(self._pair(name, value) for name, value in pairs)}"

    def slot(self, slot: Slot, params: Mapping[str, str | int] | None = None) -> str:
        """The turns of one chart slot (a day, week or month)."""
        return self.href(params, first=slot.first, last=slot.last)

    def _pair(self, name: str, value: str | int) -> str:
        key = (name, value, type(value))  # True and 1 are equal keys, not equal values
        if key not in self._encoded:
            self._encoded[key] = urlencode({name: value})
        return self._encoded[key]


def summary_cards(board: Board, links: TurnLinks) -> list[dict[str, Any]]:
    """The headline figures, each beside the previous period's and the change."""
    now, before = board.total, board.previous
    return [
        _card("turns", now.turns, before.turns, str, links.href()),
        _card(
            "refused", now.refusal_share, before.refusal_share, _percent, links.href({P.REFUSED: 1})
        ),
        _card("mean confidence", now.mean_confidence, before.mean_confidence, _score, ""),
        _card("latency p50", now.p50_ms, before.p50_ms, _seconds, ""),
        _card("latency p95", now.p95_ms, before.p95_ms, _seconds, ""),
        _card(
            "thumbs down",
            now.feedback_down,
            before.feedback_down,
            str,
            links.href({P.FEEDBACK: "down"}),
        ),
    ]


def turn_chart(board: Board, links: TurnLinks) -> dict[str, Any]:
    stacks = [
        [
            Segment(
                f.turns - f.refused,
                ANSWERED,
                links.slot(s, {P.REFUSED: 0}),
                f"{s.label}: {f.turns - f.refused} answered",
            ),
            Segment(
                f.refused, REFUSED, links.slot(s, {P.REFUSED: 1}), f"{s.label}: {f.refused} refused"
            ),
        ]
        for s, f in zip(board.slots, board.series, strict=True)
    ]
    labels = [s.label for s in board.slots]
    confidence = [Series("mean confidence", "#16a34a", [f.mean_confidence for f in board.series])]
    latency = [
        Series("p50", "#2563eb", [_in_s(f.p50_ms) for f in board.series]),
        Series("p95", "#dc2626", [_in_s(f.p95_ms) for f in board.series]),
    ]
    rows = [
        {"slot": s, "figures": f, "href": links.slot(s), "refused": links.slot(s, {P.REFUSED: 1})}
        for s, f in zip(board.slots, board.series, strict=True)
    ]
    return {
        "turns_svg": bars_svg(stacks, labels, title="Turns, answered and refused"),
        "confidence_svg": lines_svg(confidence, labels, title="Mean confidence", unit=""),
        "latency_svg": lines_svg(latency, labels, title="Latency p50 and p95", unit=" s"),
        "rows": rows,
    }


def lines_chart(
    board: Board, lines: Sequence[Line], param: str, links: TurnLinks, *, title: str
) -> dict[str, Any]:
    """Intents or categories over time: stacked bars, and a table of slots by line."""
    shown = list(lines[:LINES_SHOWN])
    stacks = [
        [
            Segment(
                line.counts[n],
                colour_at(i),
                links.slot(s, {param: line.key}),
                f"{s.label}, {line.label}: {line.counts[n]}",
            )
            for i, line in enumerate(shown)
        ]
        for n, s in enumerate(board.slots)
    ]
    rows = [
        (s, [(line.counts[n], links.slot(s, {param: line.key})) for line in shown])
        for n, s in enumerate(board.slots)
    ]
    return {
        "svg": bars_svg(stacks, [s.label for s in board.slots], title=title),
        "legend": [
            (line, colour_at(i), links.href({param: line.key})) for i, line in enumerate(shown)
        ],
        "rows": rows,
        "hidden": len(lines) - len(shown),
    }


def band_rows(total: Figures, links: TurnLinks) -> list[tuple[str, int, float, str, str]]:
    """(band, turns, share, colour, link) for each band, best first."""
    counts = {band: total.band_count(band) for band in ConfidenceBand}
    return [
        (band.value, n, _share(n, total.turns), BAND_COLOURS[band], links.href({P.BAND: band}))
        for band, n in counts.items()
    ]


def _card(label: str, now: Any, before: Any, shown: Any, href: str) -> dict[str, Any]:
    change = None
    if isinstance(now, int | float) and isinstance(before, int | float) and before:
        change = round((now - before) / before * 100, 1)
    return {
        "label": label,
        "value": "–" if now is None else shown(now),
        "previous": "–" if before is None else shown(before),
        "change": change,
        "href": href,
    }


def _share(part: float, whole: float) -> float:
    return round(part / whole * 100, 1) if whole else 0.0


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _score(value: float) -> str:
    return f"{value:.2f}"


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.2f} s"


def _in_s(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def preset_links(period: Period, *, range_value: str) -> list[tuple[int, str, bool]]:
    """(days, link, current) per preset: a link keeps the valid cuts and drops custom days."""
    cuts = {name: value for name in CUTS if (value := getattr(period, name)) != ANY}
    return [(d, "?" + urlencode({**cuts, "range": d}), range_value == str(d)) for d in PRESET_DAYS]


def dashboard_context(
    board: Board,
    links: TurnLinks,
    query: Any,
    refused: Sequence[QuestionCount],
    *,
    range_value: str,
) -> dict[str, Any]:
    """Everything the template shows; `query` is the request's GET (for the preset links),
    `range_value` the preset (or "custom") the form keeps while a cut is changed."""
    p = board.period
    before = p.previous()
    return {
        "title": "Dashboard",
        "subtitle": f"{p.first:%Y-%m-%d} to {p.last:%Y-%m-%d} ({p.days} days), compared with "
        f"{before.first:%Y-%m-%d} to {before.last:%Y-%m-%d}",
        "board": board,
        "presets": preset_links(p, range_value=range_value),
        "range_value": range_value,
        "csv_url": "?" + urlencode({**query.dict(), "format": "csv"}),
        "cards": summary_cards(board, links),
        "turns": turn_chart(board, links),
        "charts": [
            (
                "intents",
                lines_chart(board, board.intents, P.INTENT, links, title="Intents"),
                "Intents over time",
            ),
            (
                "categories",
                lines_chart(board, board.categories, P.CATEGORY, links, title="Categories"),
                "Categories over time",
            ),
        ],
        "category_rows": [
            (
                line,
                links.href({P.CATEGORY: line.key}),
                {f: links.href({P.CATEGORY: line.key, P.FEEDBACK: f}) for f in ("up", "down")},
                links.href({P.CATEGORY: line.key, P.REFUSED: 1}),
            )
            for line in board.categories
        ],
        "bands": band_rows(board.total, links),
        "composer_rows": [(c, t, f, links.href({"composer": c})) for c, t, f in board.composers],
        "document_rows": [(d, links.href({P.CITED_DOCUMENT: d.pk})) for d in board.documents_top],
        "refused_questions": [
            (q, links.href({P.QUESTION: q.question, P.REFUSED: 1})) for q in refused
        ],
    }
