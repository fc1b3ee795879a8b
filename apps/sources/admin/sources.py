"""The sources admin. Who may add, edit and sync a source is who may write its collection;
credentials are write-only: the form never shows them back, only whether some are stored."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import ForeignKey, QuerySet
from django.http import HttpRequest
from django.utils.translation import ngettext

from apps.corpus.access import collections_writable
from apps.sources.credentials import credentials_parse
from apps.sources.models import Source, SourceKind, SourceSync
from apps.sources.sync.leases import SyncBusy
from apps.sources.sync.selectors import sources_manageable
from apps.sources.sync.services import source_credentials_set, source_sync_request, sources_pause
from ragplatform.admin_base import ReadOnlyAdmin


class SourceForm(forms.ModelForm[Source]):
    credentials = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="name=value pairs separated by newlines, or a JSON object (username, password; "
        "access_key, secret_key, region). Left empty, the stored credentials are kept.",
    )

    # A folder source reads this server's own disk: only superusers may point one anywhere.
    folder_allowed = False

    class Meta:
        model = Source
        exclude: list[str] = []

    def clean_kind(self) -> str:
        kind = str(self.cleaned_data.get("kind") or "")
        if kind == SourceKind.FOLDER and not self.folder_allowed:
            raise forms.ValidationError(
                "Only superusers may add or change a folder source: it reads the server's disk."
            )
        return kind

    def clean_credentials(self) -> dict[str, str] | None:
        text = self.cleaned_data.get("credentials") or ""
        if not text.strip():
            return None
        try:
            return credentials_parse(text=text.replace("\\n", "\n"))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc


class SourceSyncInline(admin.TabularInline[SourceSync, Source]):
    model = SourceSync
    extra = 0
    max_num = 0
    can_delete = False
    COLUMNS = ("started_at", "ended_at", "status", "seen", "added", "updated", "renamed")
    fields = readonly_fields = (*COLUMNS, "unchanged", "deleted", "failed", "error")


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin[Source]):
    form = SourceForm
    inlines = [SourceSyncInline]
    list_display = ["name", "kind", "collection", "status", "sync_ended_at", "failures_in_row"]
    list_display += ["paused", "every_minutes"]
    list_filter = ["kind", "status", "paused"]
    list_select_related = ["collection"]
    search_fields = ["name", "location"]
    actions = ["sync_now", "pause", "resume"]
    STATE = ("status", "sync_started_at", "sync_ended_at", "last_error", "failures_in_row")
    readonly_fields = (*STATE, "credentials_stored")
    fieldsets = [
        (None, {"fields": ["name", "kind", "location", "collection", "credentials"]}),
        (None, {"fields": ["credentials_stored", "include_patterns", "exclude_patterns"]}),
        ("Schedule and limits", {"fields": ["every_minutes", "paused", "max_files"]}),
        (None, {"fields": ["max_file_bytes", "max_pages", "max_depth"]}),
        ("State", {"fields": STATE}),
    ]

    def get_form(
        self, request: HttpRequest, obj: Source | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form: Any = super().get_form(request, obj, change, **kwargs)
        form.folder_allowed = bool(getattr(request.user, "is_superuser", False))
        return form

    def get_queryset(self, request: HttpRequest) -> QuerySet[Source]:
        return sources_manageable(user=request.user).select_related("collection")  # type: ignore[arg-type]

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> Any:
        if db_field.name == "collection":
            kwargs["queryset"] = collections_writable(user=request.user)  # type: ignore[arg-type]
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="Credentials stored", boolean=True)
    def credentials_stored(self, obj: Source) -> bool:
        return bool(obj.credentials_encrypted)

    def save_model(self, request: HttpRequest, obj: Source, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if (values := form.cleaned_data.get("credentials")) is not None:
            source_credentials_set(source=obj, credentials=values)

    @admin.action(description="Sync now")
    def sync_now(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        for source in queryset:
            try:
                source_sync_request(source_id=source.pk)
            except SyncBusy as exc:
                self.message_user(request, f"{source}: {exc}", messages.WARNING)
            else:
                self.message_user(request, f"{source}: sync queued.")

    @admin.action(description="Pause")
    def pause(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._paused(request, queryset, paused=True)

    @admin.action(description="Resume")
    def resume(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        self._paused(request, queryset, paused=False)

    def _paused(self, request: HttpRequest, queryset: QuerySet[Source], *, paused: bool) -> None:
        count = sources_pause(source_ids=list(queryset.values_list("pk", flat=True)), paused=paused)
        word = "paused" if paused else "resumed"
        self.message_user(
            request, ngettext("%d source %s.", "%d sources %s.", count) % (count, word)
        )


@admin.register(SourceSync)
class SourceSyncAdmin(ReadOnlyAdmin):
    list_display = ["source", "started_at", "ended_at", "status", "seen", "added", "updated"]
    list_display += ["unchanged", "deleted", "failed"]
    list_filter = ["status"]
    list_select_related = ["source"]
    date_hierarchy = "started_at"
    show_full_result_count = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[SourceSync]:
        sources = sources_manageable(user=request.user)  # type: ignore[arg-type]
        return super().get_queryset(request).filter(source__in=sources)
