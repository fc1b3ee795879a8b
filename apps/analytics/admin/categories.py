"""Analytics in the Django admin: the category list, conversation and turn categories, the
dashboard.

Categories are edited here; conversation and turn categories are written by the post-turn step,
so they are read-only. The router's labelled set and evaluations are in
`apps.answers.admin.router`. The dashboard view gates (the analysts' permission; questions and
links only for readers of turns) and calls `dashboard.board_get` (the daily counts, a fixed
number of queries whatever the period) and `question_lists`; `admin_dashboard` builds what the
template shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.analytics.admin.dashboard_page import PeriodForm, TurnLinks, dashboard_context
from apps.analytics.dashboard.csv_export import board_csv
from apps.analytics.dashboard.question_lists import questions_least_confident, questions_refused
from apps.analytics.dashboard.selectors import board_get
from apps.analytics.models import Category, ConversationCategory, TurnCategory
from apps.analytics.selectors import router_evaluation_latest
from apps.answers.turn.cuts import local_day
from apps.corpus.access import collection_ids_readable
from ragplatform.admin_base import EstimatedCountPaginator, ReadOnlyAdmin

DASHBOARD_PERMISSION = "analytics.view_dailyturncount"
TURNS_PERMISSION = "answers.view_turn"
DASHBOARD_TEMPLATE = "admin/analytics/dashboard.html"

# --- Categories and the dashboard ------------------------------------------------------------


class _CategoryCounts(TypedDict):
    conversation_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    AnnotatedCategory = WithAnnotations[Category, _CategoryCounts]


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
        form = PeriodForm(request.GET, user=request.user)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "form": form}
        # An invalid field is said beside it; the board still shows what the valid ones ask.
        status = 200 if form.is_valid() else 400
        today = local_day(timezone.now())
        period = form.period(today=today)
        board = board_get(period=period, readable=collection_ids_readable(user=request.user))
        # Auditors may open the turns behind a figure and read questions; analysts may not.
        may_see_turns = request.user.has_perm(TURNS_PERMISSION)
        refused = questions_refused(period=period) if may_see_turns else []
        least = questions_least_confident(period=period) if may_see_turns else []
        if request.GET.get("format") == "csv" and status == 200:
            return board_csv(board, refused, least)
        base = reverse(f"{self.admin_site.name}:answers_turn_changelist") if may_see_turns else ""
        range_value = form.range_value(period, today=today)
        links = TurnLinks(base, period)
        context |= dashboard_context(board, links, request.GET, refused, range_value=range_value)
        context |= {"least_confident": least, "may_see_turns": may_see_turns}
        context["evaluation"] = router_evaluation_latest()
        return TemplateResponse(request, DASHBOARD_TEMPLATE, context, status=status)


# --- Read-only records -----------------------------------------------------------------------


@admin.register(ConversationCategory)
class ConversationCategoryAdmin(ReadOnlyAdmin):
    list_display = ["conversation", "category", "score", "assigned_by", "assigned_at"]
    list_filter = ["category"]
    list_select_related = ["conversation", "category"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator


@admin.register(TurnCategory)
class TurnCategoryAdmin(ReadOnlyAdmin):
    list_display = ["turn", "category", "score", "assigned_by", "decided_at"]
    list_filter = ["category"]
    list_select_related = ["turn", "category"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator
