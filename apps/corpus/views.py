"""The original file of a document, for signed-in users who may read its collection (search
results and citations link here)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseNotFound
from django.shortcuts import get_object_or_404

from apps.corpus.access import collection_ids_readable
from apps.corpus.selectors import documents_list


@login_required
def document_source(request: HttpRequest, document_id: int) -> HttpResponse | FileResponse:
    # A document in a collection the user may not read is answered exactly like a missing one.
    readable = collection_ids_readable(user=request.user)
    document = get_object_or_404(documents_list(collection_ids=readable), pk=document_id)
    try:
        handle = document.file.open("rb")
    except (FileNotFoundError, ValueError):  # ValueError: the row has no file at all
        return HttpResponseNotFound(
            "The original file of this document is missing; ask an administrator to upload it "
            "again.",
            content_type="text/plain; charset=utf-8",
        )
    # Always a download: an uploaded HTML file must never render inside our origin.
    return FileResponse(handle, as_attachment=True, filename=document.filename)
