"""The OpenAI error body, `{"error": {"message", "type", "code", "param"}}`, which OpenAI
clients read to show a person what went wrong; `code` is the platform's `FailureCode` (or a
more precise one for a request OpenAI clients could send but this door refuses)."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from ragplatform.api import first_message
from ragplatform.errors import HTTP_STATUS, FailureCode, code_for_status

# OpenAI's error types, by HTTP status.
_TYPE = {
    status.HTTP_400_BAD_REQUEST: "invalid_request_error",
    status.HTTP_401_UNAUTHORIZED: "authentication_error",
    status.HTTP_403_FORBIDDEN: "permission_error",
    status.HTTP_404_NOT_FOUND: "not_found_error",
    status.HTTP_405_METHOD_NOT_ALLOWED: "invalid_request_error",
    status.HTTP_415_UNSUPPORTED_MEDIA_TYPE: "invalid_request_error",
    status.HTTP_429_TOO_MANY_REQUESTS: "rate_limit_error",
}


class BadCompletion(ValueError):
    """A chat completion request this door refuses (400), with the field it is about."""

    def __init__(self, message: str, *, param: str | None = None, code: str = "") -> None:
        super().__init__(message)
        self.param = param
        self.code = code or str(FailureCode.INVALID_REQUEST)


def error_data(
    *, message: str, code: str, status_code: int, param: str | None = None
) -> dict[str, Any]:
    kind = _TYPE.get(status_code, "server_error" if status_code >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": code, "param": param}}


def openai_error(
    code: FailureCode,
    message: str,
    *,
    status_code: int | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    status_code = status_code or HTTP_STATUS[code]
    body = error_data(message=message, code=str(code), status_code=status_code, param=param)
    return Response(body, status=status_code, headers=headers)


def bad_completion_response(exc: BadCompletion) -> Response:
    body = error_data(message=str(exc), code=exc.code, status_code=400, param=exc.param)
    return Response(body, status=status.HTTP_400_BAD_REQUEST)


def openai_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler (status, WWW-Authenticate, Retry-After) with OpenAI's body: what a wrong
    token (401), a throttled one (429) or a malformed JSON body (400) gets."""
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    detail = data["detail"] if isinstance(data, dict) and "detail" in data else data
    code = code_for_status(response.status_code)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        code = FailureCode.UNAUTHENTICATED
    response.data = error_data(
        message=first_message(detail), code=str(code), status_code=response.status_code
    )
    return response
