"""Pieces every app's REST API shares: pagination and the one error body."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApiPagination(PageNumberPagination):
    """Pages of REST_FRAMEWORK["PAGE_SIZE"] (RAG_API_PAGE_SIZE) items; a client may ask for
    another size with `?page_size=`, up to `max_page_size`."""

    page_size_query_param = "page_size"
    max_page_size = 100


ERROR_CODES = {
    status.HTTP_400_BAD_REQUEST: "invalid_request",
    status.HTTP_401_UNAUTHORIZED: "unauthenticated",
    status.HTTP_403_FORBIDDEN: "forbidden",
    status.HTTP_404_NOT_FOUND: "not_found",
    status.HTTP_405_METHOD_NOT_ALLOWED: "method_not_allowed",
    status.HTTP_406_NOT_ACCEPTABLE: "not_acceptable",
    status.HTTP_415_UNSUPPORTED_MEDIA_TYPE: "unsupported_media_type",
    status.HTTP_429_TOO_MANY_REQUESTS: "rate_limited",
}


def error_response(code: str, message: str, http_status: int) -> Response:
    """The error body of the whole API and of the SSE endpoints: {"error": {code, message}}."""
    return Response({"error": {"code": code, "message": message}}, status=http_status)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler (status, WWW-Authenticate), with its body in the API's error shape."""
    response = exception_handler(exc, context)
    if response is None:
        return response
    data = response.data
    detail = data["detail"] if isinstance(data, dict) and "detail" in data else data
    code = ERROR_CODES.get(response.status_code, "invalid_request")
    response.data = {"error": {"code": code, "message": first_message(detail)}}
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
