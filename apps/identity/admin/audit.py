"""The identity audit in the admin: append-only, read-only, filterable, exportable as CSV."""

from __future__ import annotations

import csv

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from apps.identity.models import IdentityEvent
from ragplatform.admin_base import ReadOnlyAdmin

_COLUMNS = ("at", "kind", "source", "provider", "username", "address", "detail")


@admin.register(IdentityEvent)
class IdentityEventAdmin(ReadOnlyAdmin):
    list_display = _COLUMNS
    list_filter = ["kind", "source"]
    search_fields = ["username", "address", "detail"]
    date_hierarchy = "at"
    show_full_result_count = False
    actions = ["export_csv"]
    fields = readonly_fields = (*_COLUMNS, "user")

    @admin.action(description="Export the selected events as CSV")
    def export_csv(self, request: HttpRequest, queryset: QuerySet[IdentityEvent]) -> HttpResponse:
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="identity-events.csv"'
        writer = csv.writer(response)
        writer.writerow(_COLUMNS)
        for event in queryset.order_by("at"):
            writer.writerow([getattr(event, column) for column in _COLUMNS])
        return response
