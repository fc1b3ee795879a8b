"""The corpus in the Django admin: collections, documents (upload, re-process) and read-only chunks.

Every changelist runs a fixed number of queries however many rows it shows (counts are
annotated or denormalised, relations are joined, vectors are never loaded); tests pin it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.defaultfilters import filesizeformat
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.translation import ngettext

from apps.corpus.access import collections_writable
from apps.corpus.admin.progress import (
    document_failure_reason,
    document_live_state,
    document_waiting,
    progress_json,
    worker_warning,
)
from apps.corpus.admin.scope import chunks_in_admin, collections_in_admin, documents_in_admin
from apps.corpus.admin.upload_page import upload_page
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus
from apps.corpus.uploads.batches import document_schedule
from ragplatform.admin_base import ReadOnlyAdmin
from ragplatform.admin_display import NEUTRAL_COLOUR, pill
from ragplatform.gates import methods_allowed, signed_in_required

# --- Collections -----------------------------------------------------------------------------


class _CollectionCounts(TypedDict):
    document_count: int
    ready_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    AnnotatedCollection = WithAnnotations[Collection, _CollectionCounts]


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin[Collection]):
    list_display = ["name", "public", "documents_link", "ready_count", "created_at"]
    list_filter = ["public"]
    search_fields = ["name"]
    fields = ["name", "description", "public", "reader_groups", "writer_groups", "created_at"]
    filter_horizontal = ["reader_groups", "writer_groups"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Collection]:
        # One grouped query for the whole page instead of two COUNTs per row.
        return collections_in_admin(request, super().get_queryset(request)).annotate(
            document_count=Count("documents"),
            ready_count=Count("documents", filter=Q(documents__status=DocumentStatus.READY)),
        )

    @admin.display(description="documents", ordering="document_count")
    def documents_link(self, collection: AnnotatedCollection) -> SafeString:
        url = reverse(f"{self.admin_site.name}:corpus_document_changelist")
        return format_html(
            '<a href="{}?collection__id__exact={}">{}</a>',
            url,
            collection.pk,
            collection.document_count,
        )

    @admin.display(description="ready", ordering="ready_count")
    def ready_count(self, collection: AnnotatedCollection) -> int:
        return collection.ready_count


# --- Documents -------------------------------------------------------------------------------

STATUS_COLOURS: dict[str, str] = {
    DocumentStatus.PENDING: "#6b7280",
    DocumentStatus.PROCESSING: "#2563eb",
    DocumentStatus.READY: "#15803d",
    DocumentStatus.FAILED: "#b91c1c",
}


# Processing owns every other field (title and language are re-derived from the file).
DOCUMENT_EDITABLE_FIELDS = frozenset({"collection", "domain", "document_type"})


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin[Document]):
    list_display = [
        "name",
        "collection",
        "status_badge",
        "progress_bar",
        "waiting",
        "failure_reason",
        "chunks_link",
        "size",
        "language",
        "updated_at",
    ]
    # Only the collections of the listed documents: the filter must not name the others.
    list_filter = [
        "status",
        ("collection", admin.RelatedOnlyFieldListFilter),
        "mime_type",
        "language",
    ]
    search_fields = ["title", "filename", "^sha256"]
    list_select_related = ["collection"]
    actions = ["reprocess"]
    fieldsets = [
        (None, {"fields": ["collection", "title", "filename", "original_file"]}),
        ("Metadata", {"fields": ["domain", "document_type", "language", "mime_type", "size"]}),
        (
            "Processing",
            {
                "fields": [
                    "status_badge",
                    "progress_bar",
                    "error_message",
                    "attempts",
                    "queued_at",
                    "chunks_link",
                    "ocr_pages",
                    "unread_pages",
                    "sha256",
                    "indexed_sha256",
                    "created_at",
                    "updated_at",
                    "ingested_at",
                ]
            },
        ),
    ]
    readonly_fields = [
        name
        for _, options in fieldsets
        for name in options["fields"]
        if isinstance(name, str) and name not in DOCUMENT_EDITABLE_FIELDS
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return documents_in_admin(request, super().get_queryset(request))

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "collection":
            kwargs["queryset"] = collections_writable(user=request.user)  # type: ignore[arg-type]
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A document is only ever created from a file: the upload page replaces the add form.
        return False

    def can_upload(self, request: HttpRequest) -> bool:
        codename = get_permission_codename("add", self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")

    def get_urls(self) -> list[URLPattern]:
        info = self.opts.app_label, self.opts.model_name
        own = [
            path(
                "upload/",
                self.admin_site.admin_view(self.upload_view),
                name="{}_{}_upload".format(*info),
            ),
            path(
                "progress/",
                # A JSON endpoint: the page's poll gets JSON errors, not the login page.
                methods_allowed("GET")(
                    signed_in_required(self.admin_site.admin_view(self.progress_view))
                ),
                name="{}_{}_progress".format(*info),
            ),
            path(
                "<path:object_id>/original/",
                self.admin_site.admin_view(self.original_view),
                name="{}_{}_original".format(*info),
            ),
        ]
        return own + super().get_urls()

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # On the page itself only: an action posted here redirects, and says what it did.
        if request.method == "GET" and (warning := worker_warning(self.get_queryset(request))):
            self.message_user(request, warning, messages.WARNING)
        context = {
            "can_upload": self.can_upload(request),
            "progress_poll_ms": int(settings.RAG_ADMIN_PROGRESS_POLL_S * 1000),
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context=context)

    # Columns --------------------------------------------------------------------------------

    @admin.display(description="document", ordering="title")
    def name(self, document: Document) -> SafeString:
        if not document.title or document.title == document.filename:
            return format_html("{}", document.filename)
        return format_html('{}<br><span class="quiet">{}</span>', document.title, document.filename)

    @admin.display(description="status", ordering="status")
    def status_badge(self, document: Document) -> SafeString:
        return pill(
            document.get_status_display(),
            colour=STATUS_COLOURS.get(document.status, NEUTRAL_COLOUR),
            title=document.error_message,
        )

    @admin.display(description="progress", ordering="progress")
    def progress_bar(self, document: Document) -> SafeString:
        # data-document-id: the list's script finds the rows to refresh by it.
        return format_html(
            '<span style="white-space:nowrap" data-document-id="{}" data-status="{}">'
            '<progress value="{}" max="100" style="width:5em"></progress> {}%</span>',
            document.pk,
            document_live_state(document),
            document.progress,
            document.progress,
        )

    @admin.display(description="waiting", ordering="queued_at")
    def waiting(self, document: Document) -> SafeString:
        return document_waiting(document)

    @admin.display(description="failure reason")
    def failure_reason(self, document: Document) -> SafeString:
        return document_failure_reason(document)

    @admin.display(description="chunks", ordering="chunk_count")
    def chunks_link(self, document: Document) -> SafeString:
        # chunk_count is kept on the row by processing, so no COUNT per document.
        url = reverse(f"{self.admin_site.name}:corpus_chunk_changelist")
        return format_html(
            '<a href="{}?document={}">{}</a>', url, document.pk, document.chunk_count
        )

    @admin.display(description="size", ordering="size_bytes")
    def size(self, document: Document) -> str:
        return filesizeformat(document.size_bytes)

    @admin.display(description="original file")
    def original_file(self, document: Document) -> SafeString:
        url = reverse(f"{self.admin_site.name}:corpus_document_original", args=[document.pk])
        return format_html('<a href="{}">{}</a>', url, document.filename)

    # Actions and pages ----------------------------------------------------------------------

    @admin.action(description="Re-process selected documents", permissions=["change"])
    def reprocess(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        documents = list(queryset)
        for document in documents:
            document_schedule(document=document, wait=False)
        count = len(documents)
        self.message_user(
            request,
            ngettext(
                "Queued %(count)d document for processing.",
                "Queued %(count)d documents for processing.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        if not self.can_upload(request):
            raise PermissionDenied
        return upload_page(self, request)

    def progress_view(self, request: HttpRequest) -> JsonResponse:
        return progress_json(self, request)

    def original_view(self, request: HttpRequest, object_id: str) -> FileResponse:
        document = self.get_object(request, unquote(object_id))
        if document is None or not document.file:
            raise Http404("No such document")
        if not self.has_view_permission(request, document):
            raise PermissionDenied
        try:
            handle = document.file.open("rb")
        except FileNotFoundError as exc:
            raise Http404("The stored file is missing") from exc
        # An attachment, never inline: an uploaded HTML file must not run in the admin's origin.
        return FileResponse(
            handle,
            as_attachment=True,
            filename=document.filename,
            content_type=document.mime_type or "application/octet-stream",
        )


# --- Chunks ----------------------------------------------------------------------------------


class ChunkDocumentFilter(admin.SimpleListFilter):
    """Filter by ?document=<id> (the links from documents) without listing every document."""

    title = "document"
    parameter_name = "document"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        value = self.value()
        if not value or not value.isdigit():
            return []
        # Named only if this admin user may see it: the id in the URL is the user's to choose.
        documents = documents_in_admin(request, Document.objects.only("title", "filename"))
        document = documents.filter(pk=int(value)).first()
        return [(value, str(document))] if document else []

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(document_id=int(value)) if value.isdigit() else queryset.none()


# The change view: full text and provenance, never the raw vector.
CHUNK_DETAIL_FIELDS = (
    "document",
    "index",
    "page",
    "heading",
    "text",
    "char_span",
    "token_count",
    "language",
    "ocr_confidence",
    "search_config",
    "content_hash",
    "embedding_model",
)


@admin.register(Chunk)
class ChunkAdmin(ReadOnlyAdmin):
    """Chunks are written by processing only."""

    list_display = [
        "document",
        "index",
        "page",
        "heading",
        "token_count",
        "language",
        "ocr_confidence",
        "short_text",
    ]
    list_display_links = ["index", "short_text"]
    list_filter = [ChunkDocumentFilter]
    list_select_related = ["document"]
    search_fields = ["text"]
    # The table grows with the corpus: skip the second, unfiltered COUNT(*).
    show_full_result_count = False
    fields = readonly_fields = CHUNK_DETAIL_FIELDS

    def get_queryset(self, request: HttpRequest) -> QuerySet[Chunk]:
        # 384 floats and a tsvector per row are never shown; do not fetch them.
        chunks = super().get_queryset(request).defer("embedding", "search_vector")
        return chunks_in_admin(request, chunks)

    @admin.display(description="text")
    def short_text(self, chunk: Chunk) -> str:
        return Truncator(chunk.text).chars(90)

    @admin.display(description="characters")
    def char_span(self, chunk: Chunk) -> str:
        return f"{chunk.char_start}–{chunk.char_end}"
