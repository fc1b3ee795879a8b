"""Analytics in the Django admin: the category list, the labelled set, evaluations, a dashboard.

Categories and labelled queries are edited here; conversation categories and router
evaluations are written by the post-turn step and `evaluate_router`, so they are read-only.
The dashboard reads the daily counts through `apps.analytics.selectors` (four small queries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.analytics.models import Category, ConversationCategory, LabelledQuery, RouterEvaluation
from apps.analytics.selectors import DayStats, dashboard_get
from apps.answers.admin_base import BAND_COLOURS, EstimatedCountPaginator, ReadOnlyAdmin
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.routing.types import Intent, Tier

DASHBOARD_DAYS = 30

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
        if not self.has_view_permission(request):
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


# --- Labelled queries ------------------------------------------------------------------------


class LabelledQueryForm(forms.ModelForm[LabelledQuery]):
    # The database only accepts the router's vocabulary; offer exactly that.
    intent = forms.ChoiceField(choices=[(str(i), str(i)) for i in Intent])
    tier = forms.ChoiceField(choices=[(str(t), str(t)) for t in Tier])

    class Meta:
        model = LabelledQuery
        fields = ["text", "intent", "tier", "language", "split"]


@admin.register(LabelledQuery)
class LabelledQueryAdmin(admin.ModelAdmin[LabelledQuery]):
    form = LabelledQueryForm
    list_display = ["short_text", "intent", "tier", "language", "split", "created_at"]
    list_filter = ["intent", "tier", "language", "split"]
    search_fields = ["text"]

    @admin.display(description="text", ordering="text")
    def short_text(self, query: LabelledQuery) -> str:
        return Truncator(query.text).chars(100)


# --- Read-only records -----------------------------------------------------------------------


@admin.register(ConversationCategory)
class ConversationCategoryAdmin(ReadOnlyAdmin):
    list_display = ["conversation", "category", "score", "assigned_by", "assigned_at"]
    list_filter = ["category"]
    list_select_related = ["conversation", "category"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator


def confusion_table(report: dict[str, Any]) -> SafeString:
    """Rows are gold labels, columns predicted ones; the diagonal is what the router got right."""
    labels = [str(label) for label in report.get("labels") or []]
    matrix = report.get("confusion") or []
    if not labels or len(matrix) != len(labels):
        return format_html("{}", "No confusion matrix in this report.")
    biggest = max((max(row, default=0) for row in matrix), default=0) or 1

    def cell(i: int, j: int, value: int) -> SafeString:
        colour = "21,128,61" if i == j else "185,28,28"
        alpha = 0.08 + 0.6 * value / biggest if value else 0
        return format_html(
            '<td class="numeric" style="background:rgba({},{})">{}</td>',
            colour,
            f"{alpha:.2f}",
            value,
        )

    head = format_html_join("", "<th>{}</th>", ((label,) for label in labels))
    rows = format_html_join(
        "",
        "<tr><th>{}</th>{}</tr>",
        (
            (labels[i], format_html_join("", "{}", ((cell(i, j, v),) for j, v in enumerate(row))))
            for i, row in enumerate(matrix)
        ),
    )
    return format_html(
        '<table class="confusion"><thead><tr><th>gold \\ predicted</th>{}</tr></thead>'
        "<tbody>{}</tbody></table>",
        head,
        rows,
    )


def per_class_table(report: dict[str, Any]) -> SafeString:
    per_class = report.get("per_class") or {}
    rows = format_html_join(
        "",
        '<tr><th>{}</th><td class="numeric">{}</td><td class="numeric">{}</td>'
        '<td class="numeric">{}</td><td class="numeric">{}</td></tr>',
        (
            (
                label,
                f"{m.get('precision', 0):.3f}",
                f"{m.get('recall', 0):.3f}",
                f"{m.get('f1', 0):.3f}",
                m.get("support", ""),
            )
            for label, m in per_class.items()
        ),
    )
    return format_html(
        "<table><thead><tr><th>intent</th><th>precision</th><th>recall</th><th>F1</th>"
        "<th>support</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


EVALUATION_FIELDS = (
    "created_at",
    "classifier",
    "dataset",
    "split",
    "examples",
    "accuracy",
    "macro_f1",
    "latency_ms_p50",
    "latency_ms_p95",
    "confusion",
    "per_class",
)


@admin.register(RouterEvaluation)
class RouterEvaluationAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "classifier",
        "dataset",
        "split",
        "examples",
        "accuracy_display",
        "macro_f1_display",
        "latency_ms_p50",
        "latency_ms_p95",
    ]
    list_filter = ["classifier", "split"]
    fields = readonly_fields = EVALUATION_FIELDS

    @admin.display(description="accuracy", ordering="accuracy")
    def accuracy_display(self, evaluation: RouterEvaluation) -> str:
        return f"{evaluation.accuracy:.3f}"

    @admin.display(description="macro-F1", ordering="macro_f1")
    def macro_f1_display(self, evaluation: RouterEvaluation) -> str:
        return f"{evaluation.macro_f1:.3f}"

    @admin.display(description="confusion matrix")
    def confusion(self, evaluation: RouterEvaluation) -> SafeString:
        return confusion_table(evaluation.report or {})

    @admin.display(description="per intent")
    def per_class(self, evaluation: RouterEvaluation) -> SafeString:
        return per_class_table(evaluation.report or {})
