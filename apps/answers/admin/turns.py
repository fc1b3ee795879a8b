"""Conversations and turns in the Django admin: the audit trail, read-only.

A turn is audit data: nobody adds, edits or deletes one here. The changelists keep a fixed
query budget on log-sized tables (counts come from correlated subqueries evaluated for the
shown page only, long columns are deferred, an unfiltered total is estimated, filters offer
known values instead of a DISTINCT over the log), and the turn's change view is the audit
page: everything one turn did, from the router's classification to the chunk behind each [cN].

The generic building blocks (paginator, per-page counts, read-only base) are in
`ragplatform.admin_base`, the band badge in `display.py`; the audit page's context is built
in `audit_page.py`; the router's labelled set and evaluations are in `router.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.answers.admin.audit import slowest_stage, stages_ms, total_ms, turns_csv
from apps.answers.admin.audit_page import TurnAuditPage, turn_for_audit
from apps.answers.admin.display import band_badge, format_score
from apps.answers.admin.filters import (
    ActionFilter,
    BandFilter,
    CategoryFilter,
    CitedDocumentFilter,
    CollectionFilter,
    ComposerFilter,
    DayFromFilter,
    DayToFilter,
    FeedbackFilter,
    GroupFilter,
    IntentFilter,
    LatencyFilter,
    QuestionFilter,
    TierFilter,
)
from apps.answers.models import Citation, Conversation, Turn
from ragplatform.admin_base import EstimatedCountPaginator, ReadOnlyAdmin, related_count

# --- Turns -----------------------------------------------------------------------------------

# Never shown in the list; several are large JSON documents per row.
TURN_LONG_FIELDS = (
    "answer",
    "classification",
    "dropped_citations",
    "followups",
    "models_used",
    "retrieval_trace",
    "context",
    "timings_ms",
    "error_message",
)


class _TurnCounts(TypedDict):
    citation_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    AnnotatedTurn = WithAnnotations[Turn, _TurnCounts]


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = [
        "asked",
        "short_question",
        "intent",
        "tier",
        "action",
        "router_score",
        "confidence_badge",
        "status_label",
        "client",
        "latency",
        "refusal",
        "category_names",
        "feedback_label",
        "composer",
        "conversation_link",
        "citations",
    ]
    list_display_links = ["asked", "short_question"]
    list_filter = [
        DayFromFilter,
        DayToFilter,
        "status",
        "client",  # its choices, so no DISTINCT over the log
        IntentFilter,
        TierFilter,
        ActionFilter,
        BandFilter,
        ComposerFilter,
        "refused",
        FeedbackFilter,
        LatencyFilter,
        CategoryFilter,
        CollectionFilter,
        GroupFilter,
        CitedDocumentFilter,
        QuestionFilter,
    ]
    search_fields = ["question", "answer"]
    list_select_related = ["conversation", "feedback"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator
    actions = ["export_csv"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Turn]:
        return (
            super()
            .get_queryset(request)
            .defer(*TURN_LONG_FIELDS)
            .annotate(
                citation_count=related_count(Citation, "turn"),
                total_ms=total_ms(),
                stage_ms=stages_ms(),
            )
            # Analytics' per-turn categories, through the relation (answers never imports it).
            .prefetch_related("category_decisions__category")
        )

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}_export"
        own = [path("export/", self.admin_site.admin_view(self.export_view), name=name)]
        return own + super().get_urls()

    # Columns --------------------------------------------------------------------------------

    @admin.display(description="asked", ordering="created_at")
    def asked(self, turn: Turn) -> str:
        return timezone.localtime(turn.created_at).strftime("%Y-%m-%d %H:%M")

    @admin.display(description="question", ordering="question")
    def short_question(self, turn: Turn) -> str:
        return Truncator(turn.question).chars(80)

    @admin.display(description="router", ordering="router_confidence")
    def router_score(self, turn: Turn) -> str:
        return format_score(turn.router_confidence)

    @admin.display(description="confidence", ordering="confidence")
    def confidence_badge(self, turn: Turn) -> SafeString:
        return band_badge(turn.confidence, turn.confidence_band)

    @admin.display(description="status", ordering="status")
    def status_label(self, turn: Turn) -> SafeString:
        label = turn.get_status_display() + (" (partial)" if turn.partial else "")
        return format_html('<span title="{}">{}</span>', turn.error_code, label)

    @admin.display(description="latency", ordering="total_ms")
    def latency(self, turn: Turn) -> SafeString:
        total: float | None = getattr(turn, "total_ms", None)
        if total is None:
            return format_html('<span class="quiet">{}</span>', "–")
        stage = slowest_stage(getattr(turn, "stage_ms", None) or {})
        slowest = f"slowest: {stage[0]} {stage[1] / 1000:.2f} s" if stage else "no stages"
        return format_html('<span title="{}">{} s</span>', slowest, f"{total / 1000:.2f}")

    @admin.display(description="refusal")
    def refusal(self, turn: Turn) -> str:
        if not turn.refused:
            return ""
        return Truncator(turn.refusal_reason).chars(60) or "refused"

    @admin.display(description="categories")
    def category_names(self, turn: Turn) -> str:
        decisions = sorted(turn.category_decisions.all(), key=lambda d: -d.score)
        return ", ".join(d.category.name for d in decisions) or "–"

    @admin.display(description="feedback")
    def feedback_label(self, turn: Turn) -> str:
        feedback = getattr(turn, "feedback", None)
        if feedback is None:
            return ""
        reason = f" ({feedback.get_reason_display()})" if feedback.reason else ""
        return f"{feedback.get_rating_display()}{reason}"

    @admin.display(description="conversation", ordering="conversation__title")
    def conversation_link(self, turn: Turn) -> SafeString:
        url = reverse(
            f"{self.admin_site.name}:answers_conversation_change", args=[turn.conversation_id]
        )
        return format_html('<a href="{}">{}</a>', url, Truncator(str(turn.conversation)).chars(40))

    @admin.display(description="citations", ordering="citation_count")
    def citations(self, turn: AnnotatedTurn) -> int:
        return turn.citation_count

    # Export ---------------------------------------------------------------------------------

    @admin.action(description="Export selected turns as CSV", permissions=["view"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Turn]) -> StreamingHttpResponse:
        return turns_csv(queryset)

    def export_view(self, request: HttpRequest) -> HttpResponseBase:
        """Every turn the changelist shows with the same filters, search and order (all pages)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseRedirect(
                reverse(f"{self.admin_site.name}:answers_turn_changelist") + "?e=1"
            )
        return turns_csv(changelist.get_queryset(request))

    # The audit page -------------------------------------------------------------------------

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        turn = turn_for_audit(unquote(object_id))
        if turn is None:
            raise Http404("No such turn")
        if not self.has_view_permission(request, turn):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": f"Turn {turn.index}: {Truncator(turn.question).chars(60)}",
            "opts": self.opts,
            "turn": turn,
            **TurnAuditPage(site_name=self.admin_site.name).context(turn),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/answers/turn/audit.html", context)


# --- Conversations ---------------------------------------------------------------------------


class _ConversationCounts(TypedDict):
    turn_count: int


if TYPE_CHECKING:
    AnnotatedConversation = WithAnnotations[Conversation, _ConversationCounts]

MAX_TURNS_SHOWN = 200
CONVERSATION_DETAIL_FIELDS = (
    "title",
    "user",
    "created_at",
    "updated_at",
    "deleted_at",
    "category_names",
    "turns_table",
)


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "user", "turn_count", "category_names", "updated_at", "deleted_at"]
    list_select_related = ["user"]
    # The relation's name, not an import: analytics imports answers, never the reverse
    # (see docs/architecture.md). Deleted: the owner removed it from their list.
    list_filter = [
        ("category_links__category", admin.RelatedFieldListFilter),
        ("deleted_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["title"]
    ordering = ["-updated_at"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator
    fields = readonly_fields = CONVERSATION_DETAIL_FIELDS

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        return (
            super()
            .get_queryset(request)
            .annotate(turn_count=related_count(Turn, "conversation"))
            .prefetch_related("category_links__category")
        )

    @admin.display(description="turns", ordering="turn_count")
    def turn_count(self, conversation: AnnotatedConversation) -> int:
        return conversation.turn_count

    @admin.display(description="categories")
    def category_names(self, conversation: Conversation) -> str:
        links = sorted(conversation.category_links.all(), key=lambda link: -link.score)
        return ", ".join(link.category.name for link in links) or "–"

    @admin.display(description="turns")
    def turns_table(self, conversation: Conversation) -> SafeString:
        turns = conversation.turns.order_by("index").only(
            "index", "question", "status", "partial", "confidence", "confidence_band", "created_at"
        )[:MAX_TURNS_SHOWN]
        rows = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>',
            (
                (
                    reverse(f"{self.admin_site.name}:answers_turn_change", args=[t.pk]),
                    t.index,
                    t.created_at.strftime("%Y-%m-%d %H:%M"),
                    Truncator(t.question).chars(100),
                    t.get_status_display() + (" (partial)" if t.partial else ""),
                    band_badge(t.confidence, t.confidence_band),
                )
                for t in turns
            ),
        )
        return format_html(
            "<table><thead><tr><th>#</th><th>asked</th><th>question</th><th>status</th>"
            "<th>confidence</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )
