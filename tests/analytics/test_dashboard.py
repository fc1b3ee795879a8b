"""The dashboard against the turn log: every figure equals a direct count over turns, and every
link lands on a turn list showing that same count."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from html import unescape

import pytest
from django.db.models import QuerySet
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.http import urlencode

from apps.analytics.admin.dashboard_page import TurnLinks
from apps.analytics.counts.latency import BUCKET_BOUNDS_MS, latency_bucket
from apps.analytics.dashboard.periods import Period, slots_for
from apps.analytics.dashboard.question_lists import period_turns_q, questions_refused
from apps.analytics.dashboard.selectors import board_get
from apps.analytics.models import ANY, Category
from apps.answers.admin.filters import TurnListParam as P
from apps.answers.models import Citation, CitationKind, Turn
from tests.analytics.dashboard_world import FIRST, LAST, World, world_build, world_spread

pytestmark = pytest.mark.django_db

NumQueries = Callable[[int], AbstractContextManager[CaptureQueriesContext]]
LINK = re.compile(r'<a href="(/admin/answers/turn/\?[^"]+)"[^>]*>(\d+)</a>')


@pytest.fixture
def world() -> World:
    return world_build()


def _cuts(world: World) -> list[tuple[int, int]]:
    return [(ANY, ANY), (world.a.pk, ANY), (world.b.pk, world.g1.pk), (ANY, world.g2.pk)]


def test_figures_equal_a_direct_count_over_the_turns(world: World) -> None:
    for collection, group in _cuts(world):
        period = Period(FIRST, LAST, collection, group)
        turns = Turn.objects.filter(period_turns_q(period))
        board = board_get(period=period)

        assert board.total.turns == turns.count() > 0
        assert board.total.refused == turns.filter(refused=True).count()
        assert board.total.rated == turns.exclude(confidence=None).count()
        assert board.total.feedback_down == turns.filter(feedback__rating="down").count()
        assert board.total.green == turns.filter(confidence_band="green").count()
        for line in board.intents:
            assert line.total == turns.filter(intent=line.key).count()
        for line in board.categories:
            decided = turns.filter(category_decisions__category_id=int(line.key))
            assert line.total == decided.count()
            assert line.extra["feedback_up"] == decided.filter(feedback__rating="up").count()
        for doc in board.documents_top:
            cited = Citation.objects.filter(
                turn__in=turns, document_id=doc.pk, kind=CitationKind.CITED
            )
            assert doc.turns == cited.values("turn").distinct().count()


def test_latency_percentiles_bracket_the_true_ones(world: World) -> None:
    board = board_get(period=Period(FIRST, LAST))
    totals = sorted(float(t["total_ms"]) for t in Turn.objects.values_list("timings_ms", flat=True))
    true_p50 = totals[len(totals) // 2]

    assert board.total.p50_ms is not None and board.total.p95_ms is not None
    assert abs(board.total.p50_ms - true_p50) <= 500  # within the bucket's width
    slowest_bound = BUCKET_BOUNDS_MS[latency_bucket(max(totals))]
    assert board.total.p50_ms <= board.total.p95_ms <= slowest_bound


def test_week_and_month_slots_hold_the_turns_of_their_days(world: World) -> None:
    # Two years back from LAST, every 17 days: weeks and months clipped at both ends, and a
    # previous period sharing a month with the period.
    world_spread(world, [LAST - dt.timedelta(days=17 * n + 15) for n in range(43)])
    for days in (90, 365):
        period = Period(LAST - dt.timedelta(days=days - 1), LAST)
        board = board_get(period=period)
        assert len(board.slots) < days
        for n, (slot, figures) in enumerate(zip(board.slots, board.series, strict=True)):
            turns = Turn.objects.filter(
                period_turns_q(replace(period, first=slot.first, last=slot.last))
            )
            assert figures.turns == turns.count() == sum(figures.latency), slot
            assert figures.refused == turns.filter(refused=True).count(), slot
            for line in board.intents:
                assert line.counts[n] == turns.filter(intent=line.key).count(), (slot, line)
            for line in board.categories:
                decided = turns.filter(category_decisions__category_id=int(line.key))
                assert line.counts[n] == decided.count(), (slot, line)
        previous = Turn.objects.filter(period_turns_q(period.previous()))
        assert board.previous.turns == previous.count() == sum(board.previous.latency) > 0
        assert board.total.turns == Turn.objects.filter(period_turns_q(period)).count()


def test_previous_period_is_the_same_length_just_before(world: World) -> None:
    week = Period(LAST - dt.timedelta(days=6), LAST)
    board = board_get(period=week)

    assert week.previous() == Period(FIRST, LAST - dt.timedelta(days=7))
    assert board.previous.turns == Turn.objects.filter(period_turns_q(week.previous())).count()


def test_slots_are_days_then_weeks_then_months() -> None:
    assert len(slots_for(Period(FIRST, LAST))) == 14
    quarter = slots_for(Period(LAST - dt.timedelta(days=89), LAST))
    assert quarter[0].first == LAST - dt.timedelta(days=89) and quarter[-1].last == LAST
    assert all(s.first.weekday() == 0 for s in quarter[1:]) and len(quarter) in (13, 14)
    year = slots_for(Period(LAST - dt.timedelta(days=364), LAST))
    assert len(year) == 13 and year[1].first.day == 1
    days = [d for s in year for d in range((s.last - s.first).days + 1)]
    assert len(days) == 365  # every day in exactly one slot


def test_every_dashboard_link_lands_on_a_turn_list_with_the_same_count(
    world: World, admin_client: Client
) -> None:
    query = {"range": "custom", "day_from": str(LAST - dt.timedelta(days=4)), "day_to": str(LAST)}
    for collection, group in _cuts(world)[1:3]:
        params = query | {"collection": collection or "", "group": group or ""}
        page = admin_client.get(reverse("admin:analytics_dashboard"), params).content.decode()
        links = {(unescape(href), int(n)) for href, n in LINK.findall(page)}
        assert len(links) > 20
        for href, shown in links:
            response = admin_client.get(href)
            assert response.status_code == 200, href
            assert response.context["cl"].result_count == shown, href


def test_links_are_encoded_as_urlencode_encodes_the_whole_query(world: World) -> None:
    period = Period(FIRST, LAST, world.a.pk, ANY, world.hr.pk)
    links = TurnLinks("/admin/answers/turn/", period)
    cuts = {P.COLLECTION: world.a.pk, P.CATEGORY: world.hr.pk}
    asked: list[dict[str, str | int]] = [
        {}, {P.REFUSED: 1}, {P.REFUSED: True}, {P.REFUSED: "1"}, {P.CATEGORY: world.it.pk},
        {P.QUESTION: "Why & how? 100% / ∑"}, {P.REFUSED: 1},
    ]  # fmt: skip
    for params in asked:
        query: dict[str, str | int] = {P.DAY_FROM: str(FIRST), P.DAY_TO: str(LAST)}
        query |= cuts | params
        assert links.href(params) == f"/admin/answers/turn/?{urlencode(query)}", params
    assert TurnLinks("", period).href({P.REFUSED: 1}) == ""


def test_refused_questions_group_identical_questions_and_link_to_them(
    world: World, admin_client: Client
) -> None:
    top = questions_refused(period=Period(FIRST, LAST))

    assert top[0].question == "Can I work from abroad?"
    assert top[0].turns == Turn.objects.filter(question=top[0].question, refused=True).count()


def test_csv_export_holds_what_the_page_shows(world: World, admin_client: Client) -> None:
    params = {"range": "custom", "day_from": str(FIRST), "day_to": str(LAST), "format": "csv"}
    response = admin_client.get(reverse("admin:analytics_dashboard"), params)

    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    period = {r["measure"]: r["value"] for r in rows if r["section"] == "period"}
    assert int(period["turns"]) == Turn.objects.count()
    assert {r["section"] for r in rows} >= {
        "previous period", "over time", "intent", "category", "most cited document",
        "never cited document", "most refused question",
    }  # fmt: skip
    never = [r["item"] for r in rows if r["section"] == "never cited document"]
    assert never == ["Never cited"]


@pytest.mark.parametrize(
    "params",
    [
        {"range": "custom", "day_from": "2026-13-01"},
        {"range": "custom"},
        {"range": "custom", "day_from": "2026-03-10", "day_to": "2026-03-01"},
        {"range": "12"},
        {"collection": "999999"},
        {"group": "abc"},
        {"category": "999999"},
        {"category": "abc"},
    ],
)
def test_bad_dashboard_input_is_a_400_with_a_message(
    admin_client: Client, params: dict[str, str]
) -> None:
    response = admin_client.get(reverse("admin:analytics_dashboard"), params)

    assert response.status_code == 400
    assert b"errornote" in response.content


def test_analysts_see_figures_without_links_or_questions(world: World, client: Client) -> None:
    from django.contrib.auth.models import User

    from tests.answers.access_world import role

    analyst = User.objects.create_user("analyst", is_staff=True)
    analyst.groups.add(role("analysts"))
    client.force_login(analyst)
    params = {"range": "custom", "day_from": str(FIRST), "day_to": str(LAST)}

    page = client.get(reverse("admin:analytics_dashboard"), params).content.decode()

    assert "/admin/answers/turn/" not in page and "Can I work from abroad?" not in page
    assert 'id="questions-hidden"' in page


def test_analysts_see_only_documents_of_collections_they_may_read(
    world: World, client: Client, admin_client: Client
) -> None:
    from django.contrib.auth.models import User

    from tests.answers.access_world import role

    # The IT wiki is private to the managers group; the analyst is not in it.
    world.b.public = False
    world.b.save()
    world.b.reader_groups.add(world.g2)
    analyst = User.objects.create_user("analyst", is_staff=True)
    analyst.groups.add(role("analysts"))
    client.force_login(analyst)
    params = {"range": "custom", "day_from": str(FIRST), "day_to": str(LAST)}
    url = reverse("admin:analytics_dashboard")

    page = client.get(url, params).content.decode()

    assert "Leave policy" in page
    assert "VPN" not in page and "Never cited" not in page  # cited, and never cited
    # A superuser reads every collection and sees them all; so does an analyst who may read it.
    everything = admin_client.get(url, params).content.decode()
    assert "VPN" in everything and "Never cited" in everything
    analyst.groups.add(world.g2)
    assert "VPN" in client.get(url, params).content.decode()


def test_analysts_are_offered_and_may_pick_only_collections_they_may_read(
    world: World, client: Client, admin_client: Client
) -> None:
    from django.contrib.auth.models import User

    from tests.answers.access_world import role

    world.b.public = False  # the IT wiki: private to the managers group
    world.b.save()
    world.b.reader_groups.add(world.g2)
    analyst = User.objects.create_user("analyst", is_staff=True)
    analyst.groups.add(role("analysts"))
    client.force_login(analyst)
    url = reverse("admin:analytics_dashboard")

    page = client.get(url).content.decode()

    assert f'<option value="{world.a.pk}">Handbook</option>' in page
    assert "IT wiki" not in page  # not its name in the collection dropdown, nor anywhere
    # Its id in the query string is refused beside the field, as a collection that is not there.
    picked = client.get(url, {"collection": world.b.pk})
    assert picked.status_code == 400 and "IT wiki" not in picked.content.decode()
    assert f'value="{world.b.pk}" selected' not in picked.content.decode()
    assert "IT wiki" in admin_client.get(url).content.decode()  # a superuser reads it
    analyst.groups.add(world.g2)  # and so does an analyst in its reader group
    assert f'<option value="{world.b.pk}">IT wiki</option>' in client.get(url).content.decode()


# --- The category filter ---------------------------------------------------------------------


def _decided(period: Period, category: Category) -> QuerySet[Turn]:
    """The period's turns (collection and group cut as before) with the category decided."""
    uncut = Period(period.first, period.last, period.collection, period.group)
    return Turn.objects.filter(period_turns_q(uncut), category_decisions__category=category)


def test_a_category_filter_counts_only_the_turns_of_that_category(world: World) -> None:
    for category, collection, group in (
        (world.hr, ANY, ANY),
        (world.it, world.a.pk, ANY),
        (world.hr, world.b.pk, ANY),
        (world.it, ANY, world.g2.pk),
    ):
        period = Period(FIRST, LAST, collection, group, category.pk)
        turns = _decided(period, category)
        board = board_get(period=period)

        assert board.total.turns == turns.count() > 0
        assert board.total.refused == turns.filter(refused=True).count()
        assert board.total.rated == turns.exclude(confidence=None).count()
        assert board.total.green == turns.filter(confidence_band="green").count()
        assert board.total.feedback_up == turns.filter(feedback__rating="up").count()
        assert sum(board.total.latency) == turns.count()  # every world turn has a total time
        assert [line.key for line in board.categories] == [str(category.pk)]
        assert board.categories[0].total == turns.count()
        for line in board.intents:
            assert line.total == turns.filter(intent=line.key).count()
        for doc in board.documents_top:
            cited = Citation.objects.filter(
                turn__in=turns, document_id=doc.pk, kind=CitationKind.CITED
            )
            assert doc.turns == cited.values("turn").distinct().count()
        refused = questions_refused(period=period)
        assert sum(q.turns for q in refused) == turns.filter(refused=True).count()


def test_a_category_filter_costs_no_query_more(
    world: World, django_assert_num_queries: NumQueries
) -> None:
    with django_assert_num_queries(9):
        board_get(period=Period(FIRST, LAST, world.a.pk, world.g1.pk, world.it.pk))


def test_the_category_keeps_the_preset_and_collection_and_every_link_carries_it(
    world: World, admin_client: Client
) -> None:
    params = {"range": "365", "collection": str(world.a.pk), "category": str(world.hr.pk)}
    response = admin_client.get(reverse("admin:analytics_dashboard"), params)

    assert response.status_code == 200
    period = response.context["board"].period
    assert (period.days, period.collection, period.category) == (365, world.a.pk, world.hr.pk)
    assert response.context["range_value"] == "365"
    page = response.content.decode()
    assert f'<option value="{world.hr.pk}" selected>HR</option>' in page
    assert f'<option value="{world.a.pk}" selected>Handbook</option>' in page
    for _, url, _ in response.context["presets"]:
        assert f"collection={world.a.pk}" in url and f"category={world.hr.pk}" in url
    assert f"category={world.hr.pk}" in response.context["csv_url"]
    links = {(unescape(href), int(n)) for href, n in LINK.findall(page)}
    assert len(links) > 10
    for href, shown in links:
        assert f"category={world.hr.pk}" in href and f"collection={world.a.pk}" in href, href
        listed = admin_client.get(href)
        assert listed.status_code == 200, href
        assert listed.context["cl"].result_count == shown, href


def test_the_csv_export_carries_the_category(world: World, admin_client: Client) -> None:
    params = {"range": "custom", "day_from": str(FIRST), "day_to": str(LAST)}
    url = reverse("admin:analytics_dashboard")
    page = admin_client.get(url, params | {"category": world.it.pk})
    response = admin_client.get(url + unescape(page.context["csv_url"]))

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    period = {r["measure"]: r["value"] for r in rows if r["section"] == "period"}
    expected = _decided(Period(FIRST, LAST), world.it)
    assert int(period["turns"]) == expected.count() < Turn.objects.count()
    assert {r["item"] for r in rows if r["section"] == "category"} == {"IT"}


def test_an_unknown_category_is_said_beside_it_and_the_board_keeps_the_rest(
    world: World, admin_client: Client
) -> None:
    params = {"range": "90", "collection": str(world.b.pk), "category": "999999"}
    response = admin_client.get(reverse("admin:analytics_dashboard"), params)

    assert response.status_code == 400
    page = response.content.decode()
    beside = page.split('<label for="id_category">')[1].split("</span>")[0]
    assert "Select a valid choice" in beside and 'class="errorlist' in beside
    assert 'id="summary"' in page
    period = response.context["board"].period
    assert (period.days, period.collection, period.category) == (90, world.b.pk, ANY)
    assert response.context["range_value"] == "90"
