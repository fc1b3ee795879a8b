"""The platform's one error vocabulary and its one JSON error body.

Every JSON error of every layer, over HTTP (REST API, SSE endpoints, the chat's and the
admin's JSON actions, request limits, login throttling), is
`{"error": {"code": <FailureCode>, "message": <text for a person>}}`; the WebSocket carries the
same codes in its `failed` event. The codes live here, below every app, so corpus and the
platform's own middleware name them as the answer stream does.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from http import HTTPStatus
from types import MappingProxyType
from typing import Any

from django.http import JsonResponse
from rest_framework.response import Response


class FailureCode(StrEnum):
    """Why a request was refused or a turn failed; the values are part of the protocol."""

    # A request refused (its HTTP status is in HTTP_STATUS).
    INVALID_REQUEST = "invalid_request"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    CONFLICT = "conflict"
    REQUEST_TOO_LARGE = "request_too_large"  # the whole body, before anything reads it
    FILE_TOO_LARGE = "file_too_large"  # one uploaded file
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"  # the request's Content-Type
    UNSUPPORTED_FILE_TYPE = "unsupported_file_type"  # an uploaded file's kind
    RATE_LIMITED = "rate_limited"
    LOGIN_LOCKED = "login_locked"
    # The chat socket could not check the login: the database cannot be reached (restarting,
    # failing over). Nothing about the login is wrong; the socket is closed 4503 to be retried.
    UNAVAILABLE = "unavailable"
    # A turn that started and failed (the `failed` event, a turn's `error`).
    CANCELLED = "cancelled"
    MODEL_UNAVAILABLE = "model_unavailable"
    MODEL_TIMEOUT = "model_timeout"
    MODEL_INTERRUPTED = "model_interrupted"
    # The model hit its token limit (finish_reason "length"): the answer is kept, marked partial.
    ANSWER_TRUNCATED = "answer_truncated"
    EMPTY_ANSWER = "empty_answer"
    INTERRUPTED = "interrupted"  # the process answering it stopped (its lease lapsed)
    INTERNAL = "internal_error"


# The HTTP status of each refusal; a turn's failures are not refusals and have none here.
HTTP_STATUS: Mapping[FailureCode, int] = MappingProxyType(
    {
        FailureCode.INVALID_REQUEST: HTTPStatus.BAD_REQUEST,
        FailureCode.UNAUTHENTICATED: HTTPStatus.UNAUTHORIZED,
        FailureCode.FORBIDDEN: HTTPStatus.FORBIDDEN,
        FailureCode.NOT_FOUND: HTTPStatus.NOT_FOUND,
        FailureCode.METHOD_NOT_ALLOWED: HTTPStatus.METHOD_NOT_ALLOWED,
        FailureCode.NOT_ACCEPTABLE: HTTPStatus.NOT_ACCEPTABLE,
        FailureCode.CONFLICT: HTTPStatus.CONFLICT,
        FailureCode.REQUEST_TOO_LARGE: HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
        FailureCode.FILE_TOO_LARGE: HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
        FailureCode.UNSUPPORTED_MEDIA_TYPE: HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        FailureCode.UNSUPPORTED_FILE_TYPE: HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        FailureCode.RATE_LIMITED: HTTPStatus.TOO_MANY_REQUESTS,
        FailureCode.LOGIN_LOCKED: HTTPStatus.TOO_MANY_REQUESTS,
    }
)
# The code of an error that arrives as a bare status (DRF's exceptions): the first code above
# with that status, so the general one (`request_too_large`, not `file_too_large`).
_CODE_FOR_STATUS: Mapping[int, FailureCode] = MappingProxyType(
    {status: code for code, status in reversed(list(HTTP_STATUS.items()))}
)


def code_for_status(status: int) -> FailureCode:
    if status in _CODE_FOR_STATUS:
        return _CODE_FOR_STATUS[status]
    return FailureCode.INTERNAL if status >= 500 else FailureCode.INVALID_REQUEST


def error_body(code: FailureCode, message: str) -> dict[str, Any]:
    return {"error": {"code": str(code), "message": message}}


def json_error(
    code: FailureCode,
    message: str,
    *,
    status: int | None = None,
    headers: dict[str, str] | None = None,
) -> JsonResponse:
    """The error body for a plain Django view; the status is the code's unless given."""
    return JsonResponse(
        error_body(code, message), status=status or HTTP_STATUS[code], headers=headers
    )


def error_response(
    code: FailureCode,
    message: str,
    *,
    status: int | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """The same body for a DRF view."""
    return Response(error_body(code, message), status=status or HTTP_STATUS[code], headers=headers)
