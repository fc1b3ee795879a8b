"""REST API for documents: upload (202 + status URL) and status."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView, RetrieveAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.corpus.access import collection_ids_readable
from apps.corpus.documents.selectors import documents_list
from apps.corpus.ingestion.services import FileTooLarge
from apps.corpus.models import Document
from apps.corpus.parsing import DocumentError, UnsupportedFileType
from apps.corpus.uploads.batches import files_ingest, upload_incoming
from apps.corpus.uploads.guard import (
    UploadRefused,
    single_upload_declared_check,
    upload_quota_take,
    upload_read_check,
)
from apps.corpus.uploads.targets import collection_for_upload
from ragplatform.api import first_message
from ragplatform.errors import FailureCode, error_response, json_error


class DocumentSerializer(serializers.ModelSerializer[Document]):
    collection = serializers.CharField(source="collection.name")
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = [
            "id",
            "collection",
            "title",
            "filename",
            "mime_type",
            "sha256",
            "size_bytes",
            "language",
            "domain",
            "document_type",
            "status",
            "progress",
            "error_message",
            "chunk_count",
            "created_at",
            "updated_at",
            "ingested_at",
            "status_url",
        ]

    def get_status_url(self, document: Document) -> str:
        return reverse("api-document-detail", args=[document.pk])


class DocumentUploadSerializer(serializers.Serializer[None]):
    file = serializers.FileField(allow_empty_file=True)
    collection = serializers.CharField(max_length=200, default="Default")
    domain = serializers.CharField(max_length=100, required=False, default="")
    document_type = serializers.CharField(max_length=100, required=False, default="")


class DocumentListCreateView(ListAPIView[Document], APIView):
    serializer_class = DocumentSerializer
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self) -> QuerySet[Document]:
        return _readable_documents(self.request)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # Before authentication: its CSRF check would already parse the body.
        if request.method == "POST":
            try:
                single_upload_declared_check(request=request)
            except UploadRefused as exc:
                return json_error(exc.code, str(exc))
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(request=DocumentUploadSerializer, responses={202: DocumentSerializer})
    def post(self, request: Request) -> Response:
        upload = DocumentUploadSerializer(data=request.data)
        try:
            upload_read_check(request=request)
            upload.is_valid(raise_exception=True)
            # Who may upload where is decided before the upload counts against the rate.
            collection = collection_for_upload(user=request.user, name=upload.data["collection"])
            upload_quota_take(user_id=request.user.pk, files=1)  # type: ignore[arg-type]  # signed in
        except UploadRefused as exc:
            return error_response(exc.code, str(exc))
        except ValidationError as exc:
            return error_response(FailureCode.INVALID_REQUEST, first_message(exc.detail))
        data = upload.validated_data
        (outcome,) = files_ingest(
            files=[upload_incoming(data["file"])],
            collection=collection,
            wait=False,
            domain=data["domain"],
            document_type=data["document_type"],
        )
        if outcome.error is not None:
            return _refusal(outcome.error)
        body = DocumentSerializer(outcome.document).data
        body["unchanged"] = outcome.action == "unchanged"
        response = Response(body, status=status.HTTP_202_ACCEPTED)
        response["Location"] = body["status_url"]
        return response


def _refusal(error: DocumentError) -> Response:
    if isinstance(error, UnsupportedFileType):
        return error_response(FailureCode.UNSUPPORTED_FILE_TYPE, str(error))
    if isinstance(error, FileTooLarge):
        return error_response(FailureCode.FILE_TOO_LARGE, str(error))
    raise error  # submitting refuses nothing else; anything new is a server error


class DocumentDetailView(RetrieveAPIView[Document]):
    serializer_class = DocumentSerializer

    def get_queryset(self) -> QuerySet[Document]:
        return _readable_documents(self.request)


def _readable_documents(request: Request) -> QuerySet[Document]:
    # An unreadable document is a 404, exactly like a missing one.
    return documents_list(collection_ids=collection_ids_readable(user=request.user))
