"""The admin's upload page: choose a collection (an existing writable one is offered first),
metadata and files; on an error the chosen files are kept on the server and offered again.

`DocumentAdmin.upload_view` gates and calls `upload_page`; the work is in services
(`uploads_ingest`, `uploads/kept.py`, `uploads/targets.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.contrib.admin.helpers import AdminForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from apps.corpus.access import collections_writable
from apps.corpus.admin.upload_form import DocumentUploadForm
from apps.corpus.models import Collection, KeptUpload
from apps.corpus.uploads.batches import UploadSummary, uploads_ingest
from apps.corpus.uploads.guard import UploadRefused, upload_quota_take, upload_read_check
from apps.corpus.uploads.kept import (
    kept_upload_incoming,
    kept_uploads_clear,
    kept_uploads_get,
    uploads_keep,
)
from apps.corpus.uploads.targets import collection_for_upload, collection_upload_default

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

    from apps.corpus.models import Document


def _message_level(summary: UploadSummary) -> int:
    if not summary.refused:
        return messages.SUCCESS
    return messages.WARNING if summary.queued or summary.unchanged else messages.ERROR


def _target(request: HttpRequest, form: DocumentUploadForm) -> Collection | None:
    """The collection to upload into, or None with the reason added to the form."""
    data = form.cleaned_data
    name = data["collection"].name if data["collection"] else data["new_collection"]
    try:
        return collection_for_upload(user=request.user, name=name)
    except UploadRefused as exc:
        form.add_error(None, str(exc))  # shown on the form; nothing was written
        return None


def _keep_files(
    request: HttpRequest, form: DocumentUploadForm, offered: list[KeptUpload], *, counted: bool
) -> None:
    """Keep this request's files for the next try and offer them ticked, with the kept files
    that were still ticked. `counted`: the upload quota already took these files."""
    new = request.FILES.getlist("uploads")
    if new and not counted:
        try:
            upload_quota_take(user_id=request.user.pk, files=len(new))  # type: ignore[arg-type]
        except UploadRefused as exc:
            form.add_error(None, str(exc))
            new = []
    kept = uploads_keep(user_id=request.user.pk, uploads=new)  # type: ignore[arg-type]
    ticked = form.kept_ticked()
    chosen = [str(k.token) for k in offered if str(k.token) in ticked]
    form.kept_offer([*offered, *kept], chosen=[*chosen, *(str(k.token) for k in kept)])


def _ingest(
    request: HttpRequest,
    form: DocumentUploadForm,
    collection: Collection,
    offered: list[KeptUpload],
) -> UploadSummary:
    data = form.cleaned_data
    chosen = [k for k in offered if str(k.token) in data["kept"]]
    summary = uploads_ingest(
        uploads=data["uploads"],
        kept=[kept_upload_incoming(k) for k in chosen],
        collection=collection,
        domain=data["domain"],
        document_type=data["document_type"],
    )
    kept_uploads_clear(user_id=request.user.pk)  # type: ignore[arg-type]
    return summary


def _posted(
    model_admin: ModelAdmin[Document], request: HttpRequest, form: DocumentUploadForm
) -> HttpResponse | None:
    """Handle a submitted form: a redirect once the files are queued, else None (re-render)."""
    offered: list[KeptUpload] = form.kept_uploads
    try:
        upload_read_check(request=request)
    except UploadRefused as exc:
        form.add_error(None, str(exc))  # a file was cut off at the limit: nothing to keep
        return None
    if not form.is_valid():
        _keep_files(request, form, offered, counted=False)
        return None
    try:
        upload_quota_take(user_id=request.user.pk, files=len(form.cleaned_data["uploads"]))  # type: ignore[arg-type]  # admin_view: a real user
    except UploadRefused as exc:
        form.add_error(None, str(exc))
        return None
    collection = _target(request, form)
    if collection is None:
        _keep_files(request, form, offered, counted=True)
        return None
    summary = _ingest(request, form, collection, offered)
    model_admin.message_user(request, summary.message(), _message_level(summary))
    return HttpResponseRedirect(
        reverse(f"{model_admin.admin_site.name}:corpus_document_changelist")
    )


def upload_page(model_admin: ModelAdmin[Document], request: HttpRequest) -> HttpResponse:
    writable = collections_writable(user=request.user)  # type: ignore[arg-type]  # admin_view
    if request.method == "POST":
        offered = kept_uploads_get(user_id=request.user.pk, tokens=request.POST.getlist("kept"))  # type: ignore[arg-type]
        form = DocumentUploadForm(request.POST, request.FILES, collections=writable, kept=offered)
        if (done := _posted(model_admin, request, form)) is not None:
            return done
    else:
        initial = {"collection": collection_upload_default(collections=writable)}
        form = DocumentUploadForm(collections=writable, initial=initial)
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "title": "Upload documents",
        "opts": model_admin.opts,
        "form": form,
        # AdminForm gives the page the admin's own fieldset markup; it only uses the Form API.
        "adminform": AdminForm(form, [(None, {"fields": list(form.fields)})], {}),  # type: ignore[arg-type]
        "media": model_admin.media + form.media,
    }
    return TemplateResponse(request, "admin/corpus/document/upload.html", context)
