"""The analytics admin and dashboard on the real PostgreSQL: counts, budgets, read-only records."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.analytics.dashboard.periods import Period
from apps.analytics.dashboard.selectors import board_get
from apps.analytics.models import Category, ConversationCategory
from apps.analytics.selectors import local_period
from apps.analytics.services import daily_counts_refresh_range
from apps.answers.models import Conversation, Turn
from tests.factories import (
    CategoryFactory,
    ConversationFactory,
    RouterEvaluationFactory,
    TurnFactory,
)

pytestmark = pytest.mark.django_db

MaxQueries = Callable[[int], AbstractContextManager[CaptureQueriesContext]]

# Pinned budgets (session + user included); they hold however many rows there are.
CATEGORY_LIST_QUERIES = 5
# session, user, board (9), two question lists, evaluation, collection, group and category
# choices
DASHBOARD_QUERIES = 17


def _queries(client: Client, url: str) -> tuple[int, bytes]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured), response.content


def _label(conversation: Conversation, *categories: Category) -> None:
    for category in categories:
        ConversationCategory.objects.create(
            conversation=conversation, category=category, score=0.7, assigned_by="test"
        )


def _turn_at(when: dt.datetime, **fields: object) -> Turn:
    turn = TurnFactory.create(**fields)
    Turn.objects.filter(pk=turn.pk).update(created_at=when)  # created_at is auto_now_add
    return turn


def _counted(*, days: int = 30, now: dt.datetime | None = None) -> None:
    """The dashboard reads the daily counts, so bring them up to date as the post-turn step would."""
    first, last = local_period(days=days, now=now)
    daily_counts_refresh_range(first=first, last=last)


# --- Selectors -------------------------------------------------------------------------------


def test_board_fills_every_day_and_aggregates_refusals_confidence_and_bands() -> None:
    now = dt.datetime(2026, 3, 10, 15, 0, tzinfo=dt.UTC)
    today, two_days_ago = now - dt.timedelta(hours=1), now - dt.timedelta(days=2)
    _turn_at(today, confidence=0.9, confidence_band="green")
    _turn_at(today, confidence=0.5, confidence_band="yellow")
    _turn_at(today, confidence=0.1, confidence_band="red", refused=True)
    _turn_at(two_days_ago, confidence=None, confidence_band="", action="clarify")
    _turn_at(now - dt.timedelta(days=45))  # before the period, in the previous one
    _counted(days=60, now=now)  # counted, so only the period keeps it out

    first, last = local_period(days=30, now=now)
    board = board_get(period=Period(first, last))

    assert len(board.slots) == 30 and board.slots[0].first == dt.date(2026, 2, 9)
    assert board.slots[-1].last == now.date()
    last_day = board.series[-1]
    assert (last_day.turns, last_day.refused, last_day.green, last_day.yellow) == (3, 1, 1, 1)
    assert last_day.refusal_share == pytest.approx(1 / 3)
    assert last_day.mean_confidence == pytest.approx(0.5)
    assert board.series[-3].turns == 1 and board.series[-3].mean_confidence is None
    assert board.total.turns == 4 and board.previous.turns == 1


def test_board_counts_composers_and_fallbacks() -> None:
    TurnFactory.create_batch(2, composer="openai:smollm2")
    TurnFactory.create(composer="extractive", fallback_reason="chat model timed out")
    TurnFactory.create(composer="extractive")
    _counted()

    first, last = local_period(days=30)
    rows = {c: (t, f) for c, t, f in board_get(period=Period(first, last)).composers}

    assert rows == {"openai:smollm2": (2, 0), "extractive": (2, 1)}


# --- Categories ------------------------------------------------------------------------------


def test_category_changelist_counts_conversations_within_budget(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:analytics_category_changelist")
    hr = CategoryFactory.create(name="HR")
    for _ in range(3):
        _label(ConversationFactory.create(), hr)
    admin_client.get(url)
    few, _ = _queries(admin_client, url)

    for n, category in enumerate(CategoryFactory.create_batch(15)):
        for _ in range(n % 3):
            _label(ConversationFactory.create(), category)
    with django_assert_max_num_queries(CATEGORY_LIST_QUERIES):
        many, content = _queries(admin_client, url)

    assert few == many
    assert content.count(b'class="field-conversations"') == Category.objects.count()
    link = f'?category_links__category__id__exact={hr.pk}">3</a>'
    assert link.encode() in content
    assert reverse("admin:analytics_dashboard").encode() in content


def test_category_link_lists_its_conversations(admin_client: Client) -> None:
    hr = CategoryFactory.create(name="HR")
    _label(ConversationFactory.create(title="Leave days"), hr)
    ConversationFactory.create(title="Printer jam")

    response = admin_client.get(
        reverse("admin:answers_conversation_changelist"),
        {"category_links__category__id__exact": hr.pk},
    )

    assert response.status_code == 200
    assert b"Leave days" in response.content and b"Printer jam" not in response.content


def test_categories_are_editable(admin_client: Client) -> None:
    response = admin_client.post(
        reverse("admin:analytics_category_add"),
        {"name": "Payroll", "description": "Salaries and payslips.", "active": "on"},
    )
    assert response.status_code == 302
    payroll = Category.objects.get(name="Payroll")

    admin_client.post(
        reverse("admin:analytics_category_change", args=[payroll.pk]),
        {"name": "Payroll", "description": "Salaries, payslips and expenses."},
    )

    payroll.refresh_from_db()
    assert payroll.description.endswith("expenses.") and not payroll.active


# --- Conversation categories ---------------------------------------------------------------


def test_conversation_categories_are_listed_read_only(admin_client: Client) -> None:
    _label(ConversationFactory.create(title="Leave days"), CategoryFactory.create(name="HR"))

    response = admin_client.get(reverse("admin:analytics_conversationcategory_changelist"))

    assert response.status_code == 200 and b"Leave days" in response.content
    assert reverse("admin:analytics_conversationcategory_add").encode() not in response.content


# --- The dashboard ---------------------------------------------------------------------------


def _dashboard_data(now: dt.datetime) -> None:
    _turn_at(now, confidence=0.9, confidence_band="green")
    _turn_at(now, confidence=0.3, confidence_band="red", refused=True, composer="openai:smollm2")
    _turn_at(
        now - dt.timedelta(days=1),
        confidence=0.6,
        confidence_band="yellow",
        fallback_reason="chat model timed out",
    )
    _counted(now=now)


def test_dashboard_renders_every_panel_from_the_data(admin_client: Client) -> None:
    now = timezone.now()
    _dashboard_data(now)
    RouterEvaluationFactory.create(accuracy=0.871, macro_f1=0.842)

    response = admin_client.get(reverse("admin:analytics_dashboard"))

    assert response.status_code == 200
    body = response.content.decode()
    bands = body.split('id="bands"')[1].split('id="composers"')[0]
    assert 'green</th><td class="numeric"><a href="' in bands and "33.3%" in bands
    composers = body.split('id="composers"')[1].split("</table>")[0]
    extractive = composers.split("<td>extractive</td>")[1].split("</tr>")[0]
    assert '">2</a></td><td class="numeric">1</td>' in extractive  # two turns, one fell back
    evaluation = body.split('id="router-evaluation"')[1].split("</table>")[0]
    assert "0.871" in evaluation and "0.842" in evaluation
    table = body.split('id="turns-table"')[1].split("</table>")[0]
    assert table.count("<tr><td>") == 30  # one row per day
    # turns, confidence, latency, intents; no category was decided, and that panel says so
    assert body.count('<svg class="chart"') == 4


def test_dashboard_query_count_does_not_grow_with_turns(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:analytics_dashboard")
    now = timezone.now()
    _dashboard_data(now)
    admin_client.get(url)
    few, _ = _queries(admin_client, url)

    for day in range(20):
        _turn_at(now - dt.timedelta(days=day), composer=f"composer-{day % 4}")
    _counted(now=now)
    RouterEvaluationFactory.create()
    with django_assert_max_num_queries(DASHBOARD_QUERIES):
        many, _ = _queries(admin_client, url)

    assert few == many


def test_dashboard_renders_empty_and_is_linked_from_the_app_index(admin_client: Client) -> None:
    empty = admin_client.get(reverse("admin:analytics_dashboard"))
    index = admin_client.get(reverse("admin:app_list", args=["analytics"]))

    assert empty.status_code == 200 and b"No evaluation recorded yet" in empty.content
    assert b"No turns in this period." in empty.content
    assert reverse("admin:analytics_dashboard").encode() in index.content


def test_dashboard_needs_the_view_permission(client: Client) -> None:
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("staff", password="x", is_staff=True))
    assert client.get(reverse("admin:analytics_dashboard")).status_code == 403
