"""Conversations and turns in the Django admin: the audit trail, read-only.

A turn is audit data: nobody adds, edits or deletes one here. The changelists keep a fixed
query budget on log-sized tables (counts come from correlated subqueries evaluated for the
shown page only, long columns are deferred, an unfiltered total is estimated, filters offer
known values instead of a DISTINCT over the log), and the turn's change view is the audit
page: everything one turn did, from the router's classification to the chunk behind each [cN].
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connections, models
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
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
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.answers.audit import (
    answer_html,
    answer_pieces,
    leg_value,
    scaled_stages,
    short_json,
    stage_timings,
    timeline_bars,
    turns_csv,
)
from apps.answers.models import Citation, CitationKind, Conversation, Turn
from apps.answers.routing.types import Intent, Tier
from apps.corpus.models import Chunk

# --- Shared pieces ---------------------------------------------------------------------------


class EstimatedCountPaginator(Paginator):
    """Unfiltered, a big table is counted from the planner's statistics instead of a full scan."""

    exact_below = 10_000  # small tables (and fresh ones, never analysed) are counted exactly

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if isinstance(queryset, QuerySet) and not queryset.query.where:
            estimate = _estimated_rows(queryset)
            if estimate >= self.exact_below:
                return estimate
        return super().count


def _estimated_rows(queryset: QuerySet[Any]) -> int:
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)",
            [queryset.model._meta.db_table],
        )
        row = cursor.fetchone()
    return max(int(row[0]), 0) if row else 0  # -1 until the table is first analysed


def related_count(model: type[models.Model], field: str) -> Coalesce:
    """COUNT of `model` rows pointing at the outer row, run only for the rows of the page.

    A JOIN + GROUP BY would aggregate the whole log before LIMIT; this subquery does not.
    """
    rows = (
        model._default_manager.filter(**{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(n=Count("*"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))


BAND_COLOURS: dict[str, str] = {"green": "#15803d", "yellow": "#b45309", "red": "#b91c1c"}
BANDS = tuple(BAND_COLOURS)


def band_badge(value: float | None, band: str) -> SafeString:
    if value is None:
        return format_html('<span class="quiet">{}</span>', "–")
    return format_html(
        '<span title="{} band" style="background:{};color:#fff;padding:2px 8px;'
        'border-radius:9px;font-size:0.85em;white-space:nowrap">{}</span>',
        band or "no",
        BAND_COLOURS.get(band, "#6b7280"),
        _score(value),
    )


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """Audit rows are written by the answer path only: view, never add, change or delete."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- Turn list filters: known values, no DISTINCT over the whole log -------------------------

RECENT_TURNS = 2000


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
    title = parameter_name = "intent"
    known = tuple(Intent)


class TierFilter(KnownValuesFilter):
    title = parameter_name = "tier"
    known = tuple(Tier)


class ActionFilter(KnownValuesFilter):
    title = parameter_name = "action"
    known = ("answer", "hybrid", "clarify", "search", "chat")
    recent = True


class BandFilter(KnownValuesFilter):
    title = "confidence band"
    parameter_name = "confidence_band"
    known = BANDS


class ComposerFilter(KnownValuesFilter):
    title = parameter_name = "composer"
    recent = True


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
MAX_EVENTS = 500


class _TurnCounts(TypedDict):
    citation_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    AnnotatedTurn = WithAnnotations[Turn, _TurnCounts]


@dataclass(frozen=True)
class CandidateRow:
    rank: int | None
    chunk_id: int
    chunk_url: str
    chunk_label: str
    document: str
    document_url: str
    alias: str  # its alias in the context window, "" if it did not make it in
    cited: str  # cited | attributed | ""
    legs: tuple[str, ...]  # dense, keyword, fused, rerank: "rank · score"
    variant: str


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
        "composer",
        "conversation_link",
        "citations",
    ]
    list_display_links = ["asked", "short_question"]
    list_filter = [
        "status",
        IntentFilter,
        TierFilter,
        ActionFilter,
        BandFilter,
        ComposerFilter,
        "refused",
    ]
    search_fields = ["question", "answer"]
    list_select_related = ["conversation"]
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
            .annotate(citation_count=related_count(Citation, "turn"))
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
        return _score(turn.router_confidence)

    @admin.display(description="confidence", ordering="confidence")
    def confidence_badge(self, turn: Turn) -> SafeString:
        return band_badge(turn.confidence, turn.confidence_band)

    @admin.display(description="status", ordering="status")
    def status_label(self, turn: Turn) -> SafeString:
        label = turn.get_status_display() + (" (partial)" if turn.partial else "")
        return format_html('<span title="{}">{}</span>', turn.error_code, label)

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
        turn = _turn_for_audit(unquote(object_id))
        if turn is None:
            raise Http404("No such turn")
        if not self.has_view_permission(request, turn):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": f"Turn {turn.index}: {Truncator(turn.question).chars(60)}",
            "opts": self.opts,
            "turn": turn,
            **self.audit_context(turn),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/answers/turn/audit.html", context)

    def audit_context(self, turn: Turn) -> dict[str, Any]:
        citations = _citations(turn)
        titles = {c.alias: f"{c.title} p. {c.page}" if c.page else c.title for c in citations}
        marks = [(c.position, c.alias) for c in citations if c.position is not None]
        trace, timings = turn.retrieval_trace or {}, turn.timings_ms or {}
        retrieval_timings = trace.get("timings_ms") or timings.get("retrieval") or {}
        return {
            "answer_html": answer_html(answer_pieces(turn.answer, marks), titles),
            "citation_rows": [self._citation_row(c) for c in citations],
            "candidate_rows": self._candidate_rows(turn, citations),
            "variants": [v for v in trace.get("variants") or [] if isinstance(v, Mapping)],
            "classification_json": json.dumps(turn.classification, indent=2, ensure_ascii=False),
            "categories": _categories(turn.conversation),
            "conversation_url": self._url("answers_conversation_change", turn.conversation_id),
            "timeline": timeline_bars(timings),
            "stage_tables": [
                ("Turn stages", scaled_stages(stage_timings(timings, skip=("spans", "retrieval")))),
                ("Retrieval stages", scaled_stages(stage_timings(retrieval_timings))),
            ],
            "models_used": sorted((turn.models_used or {}).items()),
            "context_stats": {k: v for k, v in (turn.context or {}).items() if k != "aliases"},
            "events": [
                (e.seq, e.type, e.created_at, short_json(e.data))
                for e in turn.events.order_by("seq").only(
                    "turn", "seq", "type", "data", "created_at"
                )[:MAX_EVENTS]
            ],
            "max_events": MAX_EVENTS,
            "band_badge": band_badge(turn.confidence, turn.confidence_band),
        }

    def _url(self, name: str, *args: object) -> str:
        return reverse(f"{self.admin_site.name}:{name}", args=args)

    def _citation_row(self, citation: Citation) -> dict[str, Any]:
        chunk, document_id = citation.chunk, citation.document_id
        return {
            "citation": citation,
            "document_url": self._url("corpus_document_change", document_id) if document_id else "",
            "file_url": reverse("document-source", args=[document_id]) if document_id else "",
            "chunk_url": self._url("corpus_chunk_change", chunk.pk) if chunk else "",
            "chunk_label": f"chunk #{chunk.index}" if chunk else "",
        }

    def _candidate_rows(self, turn: Turn, citations: Sequence[Citation]) -> list[CandidateRow]:
        trace = turn.retrieval_trace or {}
        candidates = [c for c in trace.get("candidates") or [] if isinstance(c, Mapping)]
        in_context = {
            int(cid): alias for alias, cid in ((turn.context or {}).get("aliases") or {}).items()
        }
        cited: dict[int, str] = {}
        for c in sorted(citations, key=lambda c: c.kind != CitationKind.CITED):
            if c.chunk_id is not None:
                cited.setdefault(c.chunk_id, c.kind)
        listed = [int(c["chunk_id"]) for c in candidates if "chunk_id" in c]
        # A cited chunk missing from the stored candidates still gets a row, without ranks.
        extra = [cid for cid in itertools.chain(in_context, cited) if cid not in set(listed)]
        chunks = _chunks(listed + extra)
        rows = [
            self._candidate_row(rank, dict(c), chunks, in_context, cited)
            for rank, c in enumerate(candidates, start=1)
            if "chunk_id" in c
        ]
        rows += [
            self._candidate_row(None, {"chunk_id": cid}, chunks, in_context, cited)
            for cid in dict.fromkeys(extra)
        ]
        return rows

    def _candidate_row(
        self,
        rank: int | None,
        candidate: Mapping[str, Any],
        chunks: Mapping[int, Chunk],
        in_context: Mapping[int, str],
        cited: Mapping[int, str],
    ) -> CandidateRow:
        chunk_id = int(candidate["chunk_id"])
        chunk = chunks.get(chunk_id)
        return CandidateRow(
            rank=rank,
            chunk_id=chunk_id,
            chunk_url=self._url("corpus_chunk_change", chunk_id) if chunk else "",
            chunk_label=f"#{chunk.index}" if chunk else f"{chunk_id} (no longer stored)",
            document=str(chunk.document) if chunk else "",
            document_url=self._url("corpus_document_change", chunk.document_id) if chunk else "",
            alias=in_context.get(chunk_id, ""),
            cited=cited.get(chunk_id, ""),
            legs=tuple(
                leg_value(candidate, leg) for leg in ("dense", "keyword", "fused", "rerank")
            ),
            variant=str(candidate.get("variant", "")),
        )


def _turn_for_audit(object_id: str) -> Turn | None:
    try:
        pk = int(object_id)
    except ValueError:
        return None
    return Turn.objects.select_related("conversation", "conversation__user").filter(pk=pk).first()


def _alias_order(alias: str) -> tuple[int, str]:
    digits = alias.lstrip("cC")
    return (int(digits) if digits.isdigit() else 1_000_000, alias)


def _citations(turn: Turn) -> list[Citation]:
    rows = (
        Citation.objects.filter(turn=turn)
        .select_related("document", "chunk")
        # Only what the audit shows of the joined rows: never a chunk's vector or full text.
        .only(
            *(f.name for f in Citation._meta.concrete_fields),
            "document__title",
            "document__filename",
            "chunk__index",
            "chunk__page",
        )
    )
    return sorted(rows, key=lambda c: (c.kind != CitationKind.CITED, _alias_order(c.alias)))


def _chunks(chunk_ids: Sequence[int]) -> dict[int, Chunk]:
    if not chunk_ids:
        return {}
    rows = (
        Chunk.objects.filter(pk__in=chunk_ids)
        .select_related("document")
        .only("index", "page", "document__title", "document__filename")
    )
    return {chunk.pk: chunk for chunk in rows}


def _categories(conversation: Conversation) -> list[tuple[str, float]]:
    # Analytics owns categories; answers never imports it (DESIGN), so go through the relation.
    links = conversation.category_links.select_related("category").order_by("-score")
    return [(link.category.name, link.score) for link in links]


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
    "category_names",
    "turns_table",
)


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "user", "turn_count", "category_names", "updated_at"]
    list_select_related = ["user"]
    # The relation's name, not an import: answers never imports analytics (DESIGN).
    list_filter = [("category_links__category", admin.RelatedFieldListFilter)]
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
