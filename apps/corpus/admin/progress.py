"""Live state on the admin's document list: how long a document has waited, why it failed, a
JSON view the list polls to update status and progress without a reload, and the warning that
documents wait while no task worker runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.admin.utils import display_for_field, display_for_value, lookup_field
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.timesince import timesince

from apps.corpus.documents.selectors import documents_waiting
from apps.corpus.models import Document, DocumentStatus
from ragplatform.errors import FailureCode, json_error
from ragplatform.workers import worker_alive, worker_last_seen

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

# One poll answers for at most one changelist page of documents.
MAX_IDS = 500
FINAL_STATUSES = frozenset({DocumentStatus.READY, DocumentStatus.FAILED})


def document_live_state(document: Document) -> str:
    """The status, or "queued" for a ready or failed document queued for processing again:
    the list keeps watching every document that may still change by itself."""
    if document.queued_at is not None and document.status in FINAL_STATUSES:
        return "queued"
    return str(document.status)


def document_waiting(document: Document) -> SafeString:
    """How long the document has waited for a worker (empty unless it is waiting)."""
    if document.status == DocumentStatus.PROCESSING:
        return SafeString("")
    since = document.queued_at
    if since is None and document.status == DocumentStatus.PENDING:
        since = document.updated_at  # queued before queueing times were kept
    if since is None:
        return SafeString("")
    return format_html(
        '<span title="{}">{}</span>',
        f"queued at {timezone.localtime(since):%Y-%m-%d %H:%M:%S}",
        timesince(since),
    )


def document_failure_reason(document: Document) -> SafeString:
    if document.status != DocumentStatus.FAILED:
        return SafeString("")
    short = Truncator(document.error_message).chars(140)
    return format_html('<span title="{}">{}</span>', document.error_message, short)


def _ids(raw: str) -> list[int] | None:
    parts = [p for p in raw.split(",") if p]
    if len(parts) > MAX_IDS or not all(p.isdigit() for p in parts):
        return None
    return [int(p) for p in parts]


def progress_json(model_admin: ModelAdmin[Document], request: HttpRequest) -> JsonResponse:
    """Fresh cells for the listed documents (`?ids=1,2,3`), only among those this admin user
    may see; `active` says whether any of them may still change by itself."""
    ids = _ids(request.GET.get("ids", ""))
    if ids is None:
        message = f"ids must be up to {MAX_IDS} document ids separated by commas"
        return json_error(FailureCode.INVALID_REQUEST, message)
    documents = model_admin.get_queryset(request).filter(pk__in=ids).select_related("collection")
    columns = live_columns(model_admin, request)
    rows = [
        {
            "id": document.pk,
            "status": document_live_state(document),
            "cells": {name: cell_html(model_admin, name, document) for name in columns},
        }
        for document in documents
    ]
    active = any(row["status"] not in FINAL_STATUSES for row in rows)
    return JsonResponse({"documents": rows, "active": active})


def live_columns(model_admin: ModelAdmin[Document], request: HttpRequest) -> list[str]:
    """Every column the list shows but its links (their CSS class is `field-<name>`): a
    document that finishes while the page is open changes its chunk count, size and language
    as well as its status, and a column left out shows the stale value until a reload."""
    shown = list(model_admin.get_list_display(request))
    links = set(model_admin.get_list_display_links(request, shown) or shown[:1])
    return [name for name in shown if isinstance(name, str) and name not in links]


def cell_html(model_admin: ModelAdmin[Document], name: str, document: Document) -> str:
    """One cell's content as the changelist renders it (`admin_list.items_for_result`)."""
    empty = model_admin.get_empty_value_display()
    try:
        field, attr, value = lookup_field(name, document, model_admin)
    except (AttributeError, ObjectDoesNotExist):
        return str(empty)
    if field is None:
        shown = display_for_value(value, empty, getattr(attr, "boolean", False))
    else:
        shown = display_for_field(value, field, empty)
    return str(conditional_escape(shown))  # the display methods' own markup is kept


def worker_warning(documents: QuerySet[Document]) -> str:
    """Why documents among `documents` will not move: they wait and no worker was seen
    recently; empty when all is well."""
    waiting = documents_waiting(documents=documents)
    if not waiting:
        return ""
    last_seen = worker_last_seen()
    if worker_alive(last_seen=last_seen):
        return ""
    seen = (
        "No task worker has ever been seen"
        if last_seen is None
        else f"No task worker has been seen for {timesince(last_seen)}"
    )
    noun = "document is" if waiting == 1 else "documents are"
    return f"{seen}, and {waiting} {noun} waiting to be processed. Start one with “python manage.py worker”."
