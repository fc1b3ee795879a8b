"""The turn list's filters: known values without a DISTINCT over the log, and the value filters
the analytics dashboard's links carry (a day range, a collection, a group, a category, a cited
document, feedback, latency, one exact question).

Each value filter shows its active value in the sidebar (so a reader sees why the list is
short) and is otherwise hidden. Parameter names are in `TurnListParam`: the dashboard builds its
links from them, so a figure and the list behind it count the same turns.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest

from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Citation, CitationKind, FeedbackRating, Turn
from apps.answers.routing.types import Intent, Tier, TurnAction
from apps.answers.turn.cuts import asker_group_q, local_day_start, readable_collection_q
from apps.corpus.models import Collection

RECENT_TURNS = 2000
NO_FEEDBACK = "none"


class TurnListParam(StrEnum):
    DAY_FROM = "day_from"  # first local day, included (YYYY-MM-DD)
    DAY_TO = "day_to"  # last local day, included
    INTENT = "intent"
    BAND = "confidence_band"
    REFUSED = "refused__exact"  # the admin's own boolean filter: "1" or "0"
    COLLECTION = "collection"  # turns that could read it (all-collection turns included)
    GROUP = "group"  # the asker is in it
    CATEGORY = "category"  # decided at that turn (analytics' TurnCategory)
    CITED_DOCUMENT = "cited_document"
    FEEDBACK = "feedback"  # up, down or none
    LATENCY_ABOVE_MS = "latency_above_ms"
    QUESTION = "question"  # exactly this question text


class KnownValuesFilter(admin.SimpleListFilter):
    known: tuple[str, ...] = ()
    recent = False  # also offer values seen in the latest RECENT_TURNS turns (one bounded query)

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        values = set(self.known)
        if self.recent:
            latest = Turn.objects.order_by("-created_at").values("pk")[:RECENT_TURNS]
            seen = Turn.objects.filter(pk__in=latest).order_by().values_list(self.field)
            values.update(value for (value,) in seen.distinct())
        return [(value, value) for value in sorted(values) if value]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset if value is None else queryset.filter(**{self.field: value})

    @property
    def field(self) -> str:
        return self.parameter_name or ""


class IntentFilter(KnownValuesFilter):
    title = "intent"
    parameter_name = TurnListParam.INTENT
    known = tuple(Intent)


class TierFilter(KnownValuesFilter):
    title = parameter_name = "tier"
    known = tuple(Tier)


class ActionFilter(KnownValuesFilter):
    title = parameter_name = "action"
    known = tuple(TurnAction)


class BandFilter(KnownValuesFilter):
    title = "confidence band"
    parameter_name = TurnListParam.BAND
    known = tuple(ConfidenceBand)


class ComposerFilter(KnownValuesFilter):
    title = parameter_name = "composer"
    recent = True


class FeedbackFilter(admin.SimpleListFilter):
    title = "feedback"
    parameter_name = TurnListParam.FEEDBACK

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [*((r.value, r.label) for r in FeedbackRating), (NO_FEEDBACK, "No feedback")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        if value == NO_FEEDBACK:
            return queryset.filter(feedback__isnull=True)
        return queryset.filter(feedback__rating=value)


class LatencyFilter(admin.SimpleListFilter):
    """Total time above a bound; the presets, or any value a link carries."""

    title = "latency"
    parameter_name = TurnListParam.LATENCY_ABOVE_MS
    presets_s = (1, 2, 5, 10, 30)

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        choices = [(str(s * 1000), f"over {s} s") for s in self.presets_s]
        value = self.value()
        if value and value not in dict(choices):
            choices.append((value, f"over {value} ms"))
        return choices

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset if value is None else queryset.filter(total_ms__gt=_number(value))


class ValueFilter(admin.SimpleListFilter):
    """A filter set by a link (no list of choices): shown only while active, with its value."""

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        value = self.value()
        return [(value, self.label(value))] if value else []

    def label(self, value: str) -> str:
        return value

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset if value is None else queryset.filter(self.condition(value))

    def condition(self, value: str) -> Q:
        raise NotImplementedError


class DayFromFilter(ValueFilter):
    title = "from day"
    parameter_name = TurnListParam.DAY_FROM

    def condition(self, value: str) -> Q:
        return Q(created_at__gte=local_day_start(_day(value)))


class DayToFilter(ValueFilter):
    title = "to day"
    parameter_name = TurnListParam.DAY_TO

    def condition(self, value: str) -> Q:
        return Q(created_at__lt=local_day_start(_day(value) + dt.timedelta(days=1)))


class CollectionFilter(ValueFilter):
    title = "could read collection"
    parameter_name = TurnListParam.COLLECTION

    def label(self, value: str) -> str:
        return _name(Collection.objects.filter(pk=_id(value)), value)

    def condition(self, value: str) -> Q:
        return readable_collection_q(_id(value))


class GroupFilter(ValueFilter):
    title = "asker's group"
    parameter_name = TurnListParam.GROUP

    def label(self, value: str) -> str:
        return _name(Group.objects.filter(pk=_id(value)), value)

    def condition(self, value: str) -> Q:
        return asker_group_q(_id(value))


class CategoryFilter(ValueFilter):
    """The category decided at the turn. Analytics owns categories and imports answers, never
    the reverse (docs/architecture.md), so this goes through the relation it adds to Turn."""

    title = "category at the turn"
    parameter_name = TurnListParam.CATEGORY

    def label(self, value: str) -> str:
        decisions: Any = Turn._meta.get_field("category_decisions").related_model
        category: Any = decisions._meta.get_field("category").related_model
        return _name(category._default_manager.filter(pk=_id(value)), value)

    def condition(self, value: str) -> Q:
        return Q(category_decisions__category_id=_id(value))


class CitedDocumentFilter(ValueFilter):
    title = "cited document"
    parameter_name = TurnListParam.CITED_DOCUMENT

    def condition(self, value: str) -> Q:
        cited = Citation.objects.filter(
            turn=OuterRef("pk"), document_id=_id(value), kind=CitationKind.CITED
        )
        return Q(Exists(cited))


class QuestionFilter(ValueFilter):
    title = "question"
    parameter_name = TurnListParam.QUESTION

    def condition(self, value: str) -> Q:
        return Q(question=value)


def _day(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise IncorrectLookupParameters(f"Not a day (YYYY-MM-DD): {value!r}") from exc


def _id(value: str) -> int:
    if not value.isdigit():
        raise IncorrectLookupParameters(f"Not an id: {value!r}")
    return int(value)


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError as exc:
        raise IncorrectLookupParameters(f"Not a number: {value!r}") from exc


def _name(rows: QuerySet[Any], value: str) -> str:
    found = rows.first() if value.isdigit() else None
    return str(found) if found is not None else f"#{value}"
