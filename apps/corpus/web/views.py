"""A document for signed-in users who may read its collection: the original file (a download,
only when asked), its text rendered in the page, and one chunk with its neighbours (the chat's
source preview). A document in a collection the user may not read is answered exactly like a
missing one."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotFound,
    JsonResponse,
)
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps.corpus.access import collection_ids_readable
from apps.corpus.documents.reading import (
    chunk_payload,
    chunk_view_get,
    document_blocks_read,
    document_readable_get,
)
from apps.corpus.documents.selectors import documents_list
from apps.corpus.models import Document
from apps.corpus.parsing import DocumentError
from ragplatform.errors import FailureCode, json_error
from ragplatform.gates import methods_allowed, signed_in_required

_FILE_MISSING = (
    "The original file of this document is missing; ask an administrator to upload it again."
)


@login_required
def document_source(request: HttpRequest, document_id: int) -> HttpResponse | FileResponse:
    readable = collection_ids_readable(user=request.user)
    document = get_object_or_404(documents_list(collection_ids=readable), pk=document_id)
    try:
        handle = document.file.open("rb")
    except (FileNotFoundError, ValueError):  # ValueError: the row has no file at all
        return HttpResponseNotFound(_FILE_MISSING, content_type="text/plain; charset=utf-8")
    # Always a download: an uploaded HTML file must never render inside our origin.
    return FileResponse(handle, as_attachment=True, filename=document.filename)


def _readable_document(request: HttpRequest, document_id: int) -> Document:
    try:
        return document_readable_get(
            document_id=document_id, readable=collection_ids_readable(user=request.user)
        )
    except Document.DoesNotExist:
        raise Http404("No such document") from None


@login_required
@require_GET
def document_read(request: HttpRequest, document_id: int) -> HttpResponse:
    """The document's text in the page; `?chunk=N` marks and scrolls to that chunk."""
    document = _readable_document(request, document_id)
    raw_chunk = request.GET.get("chunk", "")
    chunk = int(raw_chunk) if raw_chunk.isascii() and raw_chunk.isdigit() else None
    try:
        blocks = document_blocks_read(document=document, cited_chunk=chunk)
    except (OSError, ValueError, DocumentError):
        # Gone from storage, or no longer parses: the same message the download gives.
        return HttpResponseNotFound(_FILE_MISSING, content_type="text/plain; charset=utf-8")
    context = {
        "document": document,
        "blocks": blocks,
        "first_cited": next((i for i, b in enumerate(blocks) if b.cited), -1),
        "download_url": reverse("document-source", args=[document.pk]),
    }
    return render(request, "corpus/document_read.html", context)


@methods_allowed("GET")
@signed_in_required
def chunk_detail(request: HttpRequest, document_id: int, index: int) -> JsonResponse:
    """One chunk of a readable document and links to the chunks before and after it."""
    try:
        document = _readable_document(request, document_id)
    except Http404:
        return json_error(FailureCode.NOT_FOUND, "No such document")
    chunk = chunk_view_get(document=document, index=index)
    if chunk is None:
        return json_error(FailureCode.NOT_FOUND, "No such chunk")
    return JsonResponse(chunk_payload(document=document, chunk=chunk))
