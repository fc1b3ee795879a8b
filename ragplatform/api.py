"""Pieces every app's REST API shares: pagination, the exception handler that gives DRF's
errors the platform's one error body (`ragplatform.errors`), and who may read the schema."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler

from ragplatform.errors import code_for_status, error_body
from ragplatform.gates import user_signed_in


class ApiPagination(PageNumberPagination):
    """Pages of REST_FRAMEWORK["PAGE_SIZE"] (RAG_API_PAGE_SIZE) items; a client may ask for
    another size with `?page_size=`, up to `max_page_size`."""

    page_size_query_param = "page_size"
    max_page_size = 100


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """REST_FRAMEWORK's EXCEPTION_HANDLER: DRF's handler (status, WWW-Authenticate,
    Retry-After), with its body in the platform's error shape."""
    response = exception_handler(exc, context)
    if response is None:
        return response
    data = response.data
    detail = data["detail"] if isinstance(data, dict) and "detail" in data else data
    code = code_for_status(response.status_code)
    response.data = error_body(code, first_message(detail))
    return response


def first_message(detail: object) -> str:
    """The first message of a (nested) DRF error detail, prefixed with its field."""
    if isinstance(detail, dict):
        field, messages = next(iter(detail.items()))
        inner = first_message(messages)
        return inner if field == "non_field_errors" else f"{field}: {inner}"
    if isinstance(detail, list) and detail:
        return first_message(detail[0])
    return str(detail)


class SchemaReaders(BasePermission):
    """Who may read the OpenAPI schema and Swagger UI (SPECTACULAR_SETTINGS' SERVE_PERMISSIONS):
    signed-in users, unless RAG_API_SCHEMA_PUBLIC opens them to anyone. The schema maps every
    endpoint and field, which a public site need not hand to strangers."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(settings.RAG_API_SCHEMA_PUBLIC) or user_signed_in(request.user)
