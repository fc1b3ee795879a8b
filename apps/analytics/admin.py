"""Analytics in the Django admin: the category list, conversation categories, a dashboard.

Categories are edited here; conversation categories are written by the post-turn step, so
they are read-only. The router's labelled set and evaluations are in `apps.answers.admin_router`.
The dashboard reads the daily counts through `apps.analytics.selectors` (four small queries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.analytics.models import Category, ConversationCategory
from apps.analytics.selectors import DayStats, dashboard_get
from apps.answers.admin_base import BAND_COLOURS
from apps.answers.composing.confidence import ConfidenceBand
from ragplatform.admin_base import EstimatedCountPaginator, ReadOnlyAdmin

DASHBOARD_DAYS = 30
DASHBOARD_PERMISSION = "analytics.view_dailyturncount"

# --- Categories and the dashboard ------------------------------------------------------------


class _CategoryCounts(TypedDict):
    conversation_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    AnnotatedCategory = WithAnnotations[Category, _CategoryCounts]


def _band_rows(total: DayStats) -> list[tuple[str, int, float, str]]:
    """(band, turns, share of all turns, colour) for each band, best first."""
    counts = {band: total.band_count(band) for band in ConfidenceBand}
    return [
        (band.value, count, _share(count, total.turns), BAND_COLOURS[band])
        for band, count in counts.items()
    ]


def _share(part: float, whole: float) -> float:
    return round(part / whole * 100, 1) if whole else 0.0


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin[Category]):
    list_display = ["name", "active", "conversations", "short_description", "created_at"]
    list_filter = ["active"]
    search_fields = ["name", "description"]
    fields = ["name", "description", "active"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return super().get_queryset(request).annotate(conversation_count=Count("conversations"))

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "dashboard/",
                self.admin_site.admin_view(self.dashboard_view),
                name=f"{self.opts.app_label}_dashboard",
            )
        ]
        return own + super().get_urls()

    @admin.display(description="conversations", ordering="conversation_count")
    def conversations(self, category: AnnotatedCategory) -> SafeString:
        url = reverse(f"{self.admin_site.name}:answers_conversation_changelist")
        return format_html(
            '<a href="{}?category_links__category__id__exact={}">{}</a>',
            url,
            category.pk,
            category.conversation_count,
        )

    @admin.display(description="description")
    def short_description(self, category: Category) -> str:
        return Truncator(category.description).chars(90)

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        # The analysts' permission: the aggregates, not the categories list or any question.
        if not request.user.has_perm(DASHBOARD_PERMISSION):
            raise PermissionDenied
        board = dashboard_get(days=DASHBOARD_DAYS)
        total = board.total
        busiest_category = max((c.conversations for c in board.categories), default=0)
        busiest_day = max((d.turns for d in board.days), default=0)
        context = {
            **self.admin_site.each_context(request),
            "title": "Dashboard",
            "subtitle": f"The last {DASHBOARD_DAYS} days, since {board.since:%Y-%m-%d}",
            "opts": self.opts,
            "board": board,
            "total": total,
            "category_bars": [
                (c, _share(c.conversations, busiest_category)) for c in board.categories
            ],
            "day_bars": [
                (d, _share(d.turns - d.refused, busiest_day), _share(d.refused, busiest_day))
                for d in reversed(board.days)
            ],
            "bands": _band_rows(total),
            "unrated": total.unrated,
        }
        return TemplateResponse(request, "admin/analytics/dashboard.html", context)


# --- Read-only records -----------------------------------------------------------------------


@admin.register(ConversationCategory)
class ConversationCategoryAdmin(ReadOnlyAdmin):
    list_display = ["conversation", "category", "score", "assigned_by", "assigned_at"]
    list_filter = ["category"]
    list_select_related = ["conversation", "category"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator
