"""A small, varied turn log for the dashboard tests: two collections, two groups, categories,
feedback, citations, latencies, refusals, spread over a fortnight ending on `LAST`."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import Group, User

from apps.analytics.models import Category, TurnCategory
from apps.analytics.services import daily_counts_refresh, daily_counts_refresh_range
from apps.answers.models import FeedbackRating, Turn, TurnFeedback
from apps.corpus.models import Collection, Document
from tests.factories import (
    CategoryFactory,
    ChunkFactory,
    CitationFactory,
    CollectionFactory,
    ConversationFactory,
    DocumentFactory,
    TurnFactory,
)

LAST = dt.date(2026, 3, 14)
FIRST = LAST - dt.timedelta(days=13)
INTENTS = ("factual_question", "procedural", "comparison")


@dataclass(frozen=True)
class World:
    a: Collection
    b: Collection
    g1: Group
    g2: Group
    hr: Category
    it: Category
    docs: tuple[Document, ...]


def world_build(turns: int = 42) -> World:
    a, b = CollectionFactory.create(name="Handbook"), CollectionFactory.create(name="IT wiki")
    g1, g2 = Group.objects.create(name="staff"), Group.objects.create(name="managers")
    users = [User.objects.create_user(f"asker{n}") for n in range(3)]
    users[0].groups.add(g1)
    users[1].groups.add(g1, g2)
    world = World(
        a=a,
        b=b,
        g1=g1,
        g2=g2,
        hr=CategoryFactory.create(name="HR"),
        it=CategoryFactory.create(name="IT"),
        docs=(
            DocumentFactory.create(collection=a, title="Leave policy"),
            DocumentFactory.create(collection=a, title="Expenses"),
            DocumentFactory.create(collection=b, title="VPN"),
            DocumentFactory.create(collection=b, title="Never cited"),
        ),
    )
    readable = itertools.cycle([[a.pk], [b.pk], [a.pk, b.pk], None])
    for n in range(turns):
        _turn(world, n, users[n % 4] if n % 4 < 3 else None, next(readable))
    daily_counts_refresh_range(first=FIRST - dt.timedelta(days=14), last=LAST)
    return world


def world_spread(world: World, days: Sequence[dt.date]) -> None:
    """One more turn on each day given, as varied as the world's own, and those days counted."""
    for n, day in enumerate(days):
        turn = _turn(world, n, None, None)
        when = dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)
        Turn.objects.filter(pk=turn.pk).update(created_at=when)
    for day in sorted(set(days)):
        daily_counts_refresh(day=day)


def _turn(world: World, n: int, user: User | None, readable: list[int] | None) -> Turn:
    day = FIRST + dt.timedelta(days=n % 14)
    confidence = None if n % 7 == 0 else round((n % 10) / 10, 2)
    turn = TurnFactory.create(
        conversation=ConversationFactory.create(user=user),
        question="Can I work from abroad?" if n % 5 == 0 else f"Question {n}",
        intent=INTENTS[n % 3],
        refused=n % 5 == 0,
        refusal_reason="The documents say nothing about working abroad" if n % 5 == 0 else "",
        confidence=confidence,
        confidence_band="" if confidence is None else ("green", "yellow", "red")[n % 3],
        readable_collections=readable,
        timings_ms={"total_ms": 300.0 * (n % 9 + 1), "compose_ms": 100.0 * (n % 4)},
    )
    when = dt.datetime.combine(day, dt.time(9 + n % 10), tzinfo=dt.UTC)
    Turn.objects.filter(pk=turn.pk).update(created_at=when)
    for category in ((world.hr,), (world.it,), (world.hr, world.it), ())[n % 4]:
        TurnCategory.objects.create(turn=turn, category=category, score=0.6, assigned_by="test")
    if n % 3:
        rating = FeedbackRating.UP if n % 3 == 1 else FeedbackRating.DOWN
        TurnFeedback.objects.create(turn=turn, user=user, rating=rating)
    if not turn.refused:
        document = world.docs[n % 3]
        CitationFactory.create(turn=turn, alias="c1", chunk=ChunkFactory.create(document=document))
    return turn
