"""The rows of one local day's pre-aggregated counts, built from the turn log in one pass.

Five bounded queries read the day (its turns, their askers' groups, the collections when a turn
could read all of them, the categories decided at each turn, the documents each cited); every
count table's rows are then built in Python, so the refresh costs the same whatever the cuts.
The category is a cut like the collection and the group, so a dashboard filtered to one reads
rows too: a turn adds to the `ANY` row and to the row of each category decided at it. A refused
turn's question text is counted the same way (by text here; `refused_questions` stores them by
the text's id), so the "most often refused" list reads rows too. `services.daily_counts_refresh`
writes them.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import Group
from django.db.models import FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from apps.analytics.counts.latency import latency_bucket
from apps.analytics.models import (
    ANY,
    DailyCategoryCount,
    DailyDocumentCount,
    DailyLatencyCount,
    DailyTurnCount,
    TurnCategory,
)
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Citation, CitationKind, FeedbackRating, Turn
from apps.answers.turn.cuts import local_day_start
from apps.corpus.models import Collection

# The measures of a DailyTurnCount row, in the order the model lists them.
TURN_MEASURES = (
    "turns",
    "refused",
    "rated",
    "confidence_sum",
    *(band.value for band in ConfidenceBand),
    "fallbacks",
    "feedback_up",
    "feedback_down",
)
CATEGORY_MEASURES = ("turns", "refused", "feedback_up", "feedback_down")
# (collection, group, category, question text) -> refused turns of the day
RefusedCounts = Counter[tuple[int, int, int, str]]


@dataclass(frozen=True)
class TurnFacts:
    """What the counts need of one turn, with the cuts it belongs to (ANY first)."""

    pk: int
    composer: str
    intent: str
    refused: bool
    confidence: float | None
    band: str
    fallback: bool
    total_ms: float | None
    feedback: str  # a FeedbackRating value, or "" when the asker gave none
    question: str  # as asked; only refused turns' texts are counted
    collections: tuple[int, ...]
    groups: tuple[int, ...]
    categories: tuple[int, ...] = (ANY,)

    def measures(self) -> Counter[str]:
        return Counter(
            {
                "turns": 1,
                "refused": int(self.refused),
                "rated": int(self.confidence is not None),
                "confidence_sum": self.confidence or 0.0,
                **{band.value: int(self.band == band) for band in ConfidenceBand},
                "fallbacks": int(self.fallback),
                "feedback_up": int(self.feedback == FeedbackRating.UP),
                "feedback_down": int(self.feedback == FeedbackRating.DOWN),
            }
        )

    def cuts(self) -> Iterable[tuple[int, int]]:
        return itertools.product(self.collections, self.groups)

    def category_cuts(self) -> Iterable[tuple[int, int, int]]:
        """(collection, group, category): the cuts of the tables also cut by category."""
        return itertools.product(self.collections, self.groups, self.categories)


@dataclass
class DayRows:
    turns: list[DailyTurnCount] = field(default_factory=list)
    latency: list[DailyLatencyCount] = field(default_factory=list)
    categories: list[DailyCategoryCount] = field(default_factory=list)
    documents: list[DailyDocumentCount] = field(default_factory=list)
    refused_questions: RefusedCounts = field(default_factory=Counter)


def day_rows(day: dt.date) -> DayRows:
    start, end = local_day_start(day), local_day_start(day + dt.timedelta(days=1))
    decisions = list(
        TurnCategory.objects.filter(turn__created_at__gte=start, turn__created_at__lt=end)
        .values_list("turn_id", "category_id")
        .order_by()
    )
    facts = _turn_facts(start, end, _categories_of(decisions))
    by_pk = {f.pk: f for f in facts}
    cited = Citation.objects.filter(
        turn__created_at__gte=start, turn__created_at__lt=end, kind=CitationKind.CITED
    ).exclude(document=None)
    return DayRows(
        turns=_turn_rows(day, facts),
        latency=_latency_rows(day, facts),
        categories=_category_rows(day, by_pk, decisions),
        refused_questions=_refused_question_counts(facts),
        documents=_document_rows(
            day, by_pk, cited.values_list("turn_id", "document_id").order_by().distinct()
        ),
    )


def _categories_of(decisions: Iterable[tuple[int, int]]) -> dict[int, tuple[int, ...]]:
    found: dict[int, list[int]] = defaultdict(list)
    for turn_id, category_id in decisions:
        found[turn_id].append(category_id)
    return {turn_id: tuple(sorted(ids)) for turn_id, ids in found.items()}


def _turn_facts(
    start: dt.datetime, end: dt.datetime, categories: Mapping[int, tuple[int, ...]]
) -> list[TurnFacts]:
    rows = list(
        Turn.objects.filter(created_at__gte=start, created_at__lt=end)
        .order_by()
        .values_list(
            "pk", "composer", "intent", "refused", "confidence", "confidence_band",
            "fallback_reason", "readable_collections", "feedback__rating", "conversation__user_id",
            "question",
        )
        .annotate(total_ms=Cast(KT("timings_ms__total_ms"), FloatField()))
    )  # fmt: skip
    every_collection = _every_collection(any(row[7] is None for row in rows))
    groups = _groups_of({row[9] for row in rows if row[9] is not None})
    return [
        TurnFacts(
            pk=pk,
            composer=composer,
            intent=intent,
            refused=refused,
            confidence=confidence,
            band=band,
            fallback=bool(fallback),
            total_ms=total_ms,
            feedback=rating or "",
            question=question,
            collections=(ANY, *(every_collection if readable is None else _ids(readable))),
            groups=(ANY, *groups.get(user_id, ())),
            categories=(ANY, *categories.get(pk, ())),
        )
        for (pk, composer, intent, refused, confidence, band, fallback, readable, rating, user_id,
             question, total_ms) in rows
    ]  # fmt: skip


def _every_collection(needed: bool) -> tuple[int, ...]:
    # A turn that could read every collection is counted under each one that exists now.
    return tuple(Collection.objects.order_by("pk").values_list("pk", flat=True)) if needed else ()


def _groups_of(user_ids: set[int]) -> dict[int, tuple[int, ...]]:
    # Membership as it is at the refresh: counts follow the groups, not the group history.
    memberships = Group.user_set.through.objects.filter(user_id__in=user_ids).order_by("group_id")
    found: dict[int, list[int]] = defaultdict(list)
    for user_id, group_id in memberships.values_list("user_id", "group_id"):
        found[user_id].append(group_id)
    return {user_id: tuple(ids) for user_id, ids in found.items()}


def _ids(readable: object) -> tuple[int, ...]:
    values = readable if isinstance(readable, list) else []
    return tuple(sorted({int(v) for v in values if isinstance(v, int) and v > ANY}))


def _turn_rows(day: dt.date, facts: Iterable[TurnFacts]) -> list[DailyTurnCount]:
    sums: dict[tuple[str, str, int, int, int], Counter[str]] = defaultdict(Counter)
    for fact in facts:
        measures = fact.measures()
        for collection, group, category in fact.category_cuts():
            sums[(fact.composer, fact.intent, collection, group, category)].update(measures)
    return [
        DailyTurnCount(
            day=day, composer=composer, intent=intent, collection=collection, group=group,
            category=category, **{name: counts[name] for name in TURN_MEASURES},
        )
        for (composer, intent, collection, group, category), counts in sums.items()
    ]  # fmt: skip


def _latency_rows(day: dt.date, facts: Iterable[TurnFacts]) -> list[DailyLatencyCount]:
    counts: Counter[tuple[int, int, int, int]] = Counter()
    for fact in facts:
        if fact.total_ms is not None:
            bucket = latency_bucket(fact.total_ms)
            counts.update((*cut, bucket) for cut in fact.category_cuts())
    return [
        DailyLatencyCount(
            day=day, collection=collection, group=group, category=category, bucket=bucket, turns=n
        )
        for (collection, group, category, bucket), n in counts.items()
    ]


def _category_rows(
    day: dt.date, facts: Mapping[int, TurnFacts], decisions: Iterable[tuple[int, int]]
) -> list[DailyCategoryCount]:
    sums: dict[tuple[int, int, int], Counter[str]] = defaultdict(Counter)
    for turn_id, category_id in decisions:
        fact = facts[turn_id]
        measures = Counter({name: fact.measures()[name] for name in CATEGORY_MEASURES})
        for collection, group in fact.cuts():
            sums[(category_id, collection, group)].update(measures)
    return [
        DailyCategoryCount(
            day=day, category_id=category_id, collection=collection, group=group,
            **{name: counts[name] for name in CATEGORY_MEASURES},
        )
        for (category_id, collection, group), counts in sums.items()
    ]  # fmt: skip


def _document_rows(
    day: dt.date, facts: Mapping[int, TurnFacts], cited: Iterable[tuple[int, int]]
) -> list[DailyDocumentCount]:
    counts: Counter[tuple[int, int, int, int]] = Counter()
    for turn_id, document_id in cited:
        counts.update((document_id, *cut) for cut in facts[turn_id].category_cuts())
    return [
        DailyDocumentCount(
            day=day, document_id=document_id, collection=collection, group=group,
            category=category, turns=n,
        )
        for (document_id, collection, group, category), n in counts.items()
    ]  # fmt: skip


def _refused_question_counts(facts: Iterable[TurnFacts]) -> RefusedCounts:
    counts: RefusedCounts = Counter()
    for fact in facts:
        if fact.refused:
            counts.update((*cut, fact.question) for cut in fact.category_cuts())
    return counts
