"""The original file of a document, for signed-in users (search results and citations link here)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest
from django.shortcuts import get_object_or_404

from apps.corpus.models import Document


@login_required
def document_source(request: HttpRequest, document_id: int) -> FileResponse:
    document = get_object_or_404(Document, pk=document_id)
    # Always a download: an uploaded HTML file must never render inside our origin.
    return FileResponse(document.file.open("rb"), as_attachment=True, filename=document.filename)
