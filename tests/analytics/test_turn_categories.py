"""Categories per turn (kept as decided) and the counts that follow categories and feedback."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group, User

from apps.analytics.models import (
    ANY,
    ConversationCategory,
    DailyCategoryCount,
    DailyDocumentCount,
    DailyLatencyCount,
    DailyTurnCount,
    TurnCategory,
)
from apps.analytics.post_turn import PostTurnDecision
from apps.analytics.services import daily_counts_refresh, post_turn_apply
from apps.answers.models import Turn, TurnFeedback
from tests.factories import (
    CategoryFactory,
    ChunkFactory,
    CitationFactory,
    CollectionFactory,
    ConversationFactory,
    TurnFactory,
)

pytestmark = pytest.mark.django_db

OnCommit = Callable[..., AbstractContextManager[list[Callable[[], Any]]]]
DAY = dt.date(2026, 3, 10)
NOON = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)


def _decision(*category_ids: int) -> PostTurnDecision:
    return PostTurnDecision(None, tuple((c, 0.8) for c in category_ids), (), "test")


def test_each_turn_keeps_what_was_decided_then_while_the_conversation_set_is_replaced() -> None:
    hr, it = CategoryFactory.create(name="HR"), CategoryFactory.create(name="IT")
    conversation = ConversationFactory.create()
    first = TurnFactory.create(conversation=conversation, index=1)
    second = TurnFactory.create(conversation=conversation, index=2)

    post_turn_apply(turn=first, decision=_decision(hr.pk))
    post_turn_apply(turn=second, decision=_decision(it.pk))
    post_turn_apply(turn=second, decision=_decision(it.pk))  # run again: replaced, not added

    current = ConversationCategory.objects.filter(conversation=conversation)
    assert list(current.values_list("category__name", flat=True)) == ["IT"]
    kept = TurnCategory.objects.order_by("turn__index").values_list("turn__index", "category__name")
    assert list(kept) == [(1, "HR"), (2, "IT")]


def _at_noon(**fields: object) -> Turn:
    turn = TurnFactory.create(**fields)
    Turn.objects.filter(pk=turn.pk).update(created_at=NOON)
    return turn


def test_refresh_cuts_every_table_by_collection_and_group() -> None:
    a, b = CollectionFactory.create(), CollectionFactory.create()
    group = Group.objects.create(name="staff")
    user = User.objects.create_user("u")
    user.groups.add(group)
    only_a = _at_noon(readable_collections=[a.pk], timings_ms={"total_ms": 1200.0})
    every = _at_noon(conversation=ConversationFactory.create(user=user), readable_collections=None)
    category = CategoryFactory.create()
    TurnCategory.objects.create(turn=every, category=category, score=0.5, assigned_by="t")
    CitationFactory.create(turn=only_a, chunk=ChunkFactory.create())

    daily_counts_refresh(day=DAY)

    def turns(model: Any, collection: int, group_id: int) -> int:
        rows = model.objects.filter(day=DAY, collection=collection, group=group_id)
        if model is not DailyCategoryCount:
            rows = rows.filter(category=ANY)
        return sum(rows.values_list("turns", flat=True))

    assert [turns(DailyTurnCount, c, ANY) for c in (ANY, a.pk, b.pk)] == [2, 2, 1]
    assert [turns(DailyTurnCount, ANY, g) for g in (ANY, group.pk)] == [2, 1]
    assert turns(DailyTurnCount, b.pk, group.pk) == 1
    assert turns(DailyLatencyCount, a.pk, ANY) == 1 and turns(DailyLatencyCount, b.pk, ANY) == 0
    assert turns(DailyCategoryCount, b.pk, group.pk) == 1
    assert turns(DailyDocumentCount, a.pk, ANY) == 1 and turns(DailyDocumentCount, b.pk, ANY) == 0


def test_feedback_given_later_moves_its_days_counts(
    settings: LazySettings, django_capture_on_commit_callbacks: OnCommit
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    turn = _at_noon()
    daily_counts_refresh(day=DAY)
    uncut = DailyTurnCount.objects.filter(day=DAY, collection=ANY, group=ANY)

    with django_capture_on_commit_callbacks(execute=True):
        feedback = TurnFeedback.objects.create(turn=turn, rating="down")
    assert uncut.get().feedback_down == 1

    with django_capture_on_commit_callbacks(execute=True):
        feedback.rating = "up"
        feedback.save()
    assert (uncut.get().feedback_up, uncut.get().feedback_down) == (1, 0)

    with django_capture_on_commit_callbacks(execute=True):
        feedback.delete()
    assert (uncut.get().feedback_up, uncut.get().feedback_down) == (0, 0)


def test_a_finished_post_turn_step_recounts_its_day(monkeypatch: pytest.MonkeyPatch) -> None:
    from apps.analytics import tasks

    enqueued: list[int] = []
    monkeypatch.setattr(tasks, "post_turn_run", lambda **kwargs: None)
    monkeypatch.setattr(tasks, "default_embedder", lambda: None)
    monkeypatch.setattr(tasks, "chat_model_configured", lambda: None)
    monkeypatch.setattr(tasks, "daily_counts_task", SimpleNamespace(enqueue=enqueued.append))

    tasks.post_turn_task.call(41)
    assert enqueued == [41]

    def explode(**kwargs: object) -> None:
        raise RuntimeError("classifier down")

    monkeypatch.setattr(tasks, "post_turn_run", explode)
    tasks.post_turn_task.call(42)
    assert enqueued == [41]  # nothing new to count when the step failed


def test_refresh_cuts_turns_latency_and_documents_by_the_categories_decided() -> None:
    hr, it = CategoryFactory.create(name="HR"), CategoryFactory.create(name="IT")
    both = _at_noon(refused=True, timings_ms={"total_ms": 900.0})
    only_hr = _at_noon(timings_ms={"total_ms": 900.0})
    _at_noon()  # no category: counted only in the rows of every category
    for turn, categories in ((both, (hr, it)), (only_hr, (hr,))):
        for category in categories:
            TurnCategory.objects.create(turn=turn, category=category, score=0.5, assigned_by="t")
    CitationFactory.create(turn=only_hr, chunk=ChunkFactory.create())

    daily_counts_refresh(day=DAY)

    def summed(model: Any, category: int, column: str = "turns") -> int:
        rows = model.objects.filter(day=DAY, collection=ANY, group=ANY, category=category)
        return sum(rows.values_list(column, flat=True))

    assert [summed(DailyTurnCount, c) for c in (ANY, hr.pk, it.pk)] == [3, 2, 1]
    assert [summed(DailyTurnCount, c, "refused") for c in (ANY, hr.pk, it.pk)] == [1, 1, 1]
    assert [summed(DailyLatencyCount, c) for c in (ANY, hr.pk, it.pk)] == [2, 2, 1]
    assert [summed(DailyDocumentCount, c) for c in (ANY, hr.pk, it.pk)] == [1, 1, 0]
