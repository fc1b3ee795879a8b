"""Request bodies that cannot exhaust the server.

Three guards, outermost first:

- `BodyLimitMiddleware` wraps the ASGI application. Django copies a whole body before any view
  runs, so this is the one place to refuse a declared Content-Length over
  RAG_MAX_REQUEST_BYTES without taking it from the server, and to stop a body that declares
  nothing (or less than it sends) at the limit. (daphne itself receives a body before it
  calls the application, spooling it to a temporary file; refusing at the socket is the
  proxy's part: client_max_body_size in the deployment guide.)
- `content_length_over` lets an upload view refuse from the header before it parses anything.
- `UploadLimitHandler` runs inside the multipart parser: it stops reading at
  RAG_MAX_UPLOAD_BYTES for one file or RAG_MAX_REQUEST_BYTES in all, and leaves the reason
  where the view finds it (`upload_refusal`), since the parser itself drops the cut-off file.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, NamedTuple

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest, HttpResponse
from django.template.defaultfilters import filesizeformat
from django.utils.deprecation import MiddlewareMixin
from django.utils.html import escape

from ragplatform.errors import HTTP_STATUS, FailureCode, error_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
# Loose on purpose: Django's and channels' handlers each annotate scope and messages their own way.
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

_REFUSAL_KEY = "ragplatform.upload_refusal"


def too_large_message(limit: int) -> str:
    return f"The request is larger than the limit of {filesizeformat(limit)}"


def content_length_over(meta: MutableMapping[str, Any], limit: int) -> bool:
    """True when the request declares a body over `limit` (an unreadable header counts too)."""
    raw = str(meta.get("CONTENT_LENGTH") or "0").strip()
    if not (raw.isascii() and raw.isdigit()):
        return True
    return int(raw) > limit


def upload_refusal(request: HttpRequest) -> str | None:
    """Why the upload handler stopped reading this request's files, if it did."""
    return request.META.get(_REFUSAL_KEY)


class UploadLimitHandler(FileUploadHandler):
    """Counts the bytes of each file and of the whole body as the parser reads them."""

    def handle_raw_input(self, *args: Any, **kwargs: Any) -> None:
        self.body_bytes = 0

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.file_bytes = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.file_bytes += len(raw_data)
        self.body_bytes += len(raw_data)
        if self.file_bytes > settings.RAG_MAX_UPLOAD_BYTES:
            limit = filesizeformat(settings.RAG_MAX_UPLOAD_BYTES)
            self._refuse(f"{self.file_name} is larger than the limit of {limit} per file")
        if self.body_bytes > settings.RAG_MAX_REQUEST_BYTES:
            self._refuse(too_large_message(settings.RAG_MAX_REQUEST_BYTES))
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers store the file

    def _refuse(self, reason: str) -> None:
        if self.request is not None:
            self.request.META[_REFUSAL_KEY] = reason
        # connection_reset: do not read (and discard) the rest of the body either.
        raise StopUpload(connection_reset=True)


class BodyLimitMiddleware:
    """ASGI: answer 413 for an HTTP body over RAG_MAX_REQUEST_BYTES, reading none or
    at most the limit of it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.RAG_MAX_REQUEST_BYTES
        accept, declared = _accept(scope), _declared_length(scope)
        if declared is None:
            message = "The Content-Length header is not a number"
            await _refuse(send, refusal_body(accept, FailureCode.INVALID_REQUEST, message))
            return
        too_large = refusal_body(accept, FailureCode.REQUEST_TOO_LARGE, too_large_message(limit))
        if declared > limit:
            await _refuse(send, too_large)
            return
        guard = _ReceiveGuard(receive, limit)
        started = False

        async def send_once(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, guard, send_once)
        if guard.exceeded and not started:
            await _refuse(send, too_large)


class _ReceiveGuard:
    """Passes body messages on until `limit` bytes; then tells the app the client left."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self.receive, self.limit = receive, limit
        self.received = 0
        self.exceeded = False

    async def __call__(self) -> Message:
        if self.exceeded:
            return {"type": "http.disconnect"}
        message = await self.receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                self.exceeded = True
                return {"type": "http.disconnect"}
        return message


def _declared_length(scope: Scope) -> int | None:
    """The Content-Length header: 0 when absent, None when it is not a number."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isascii() and text.isdigit() else None
    return 0


class Refusal(NamedTuple):
    status: int
    content_type: str
    body: bytes


def refusal_body(accept: str, code: FailureCode, message: str) -> Refusal:
    """The platform's JSON error for scripts; a short page for a browser (an admin upload)."""
    status = HTTP_STATUS[code]
    if "text/html" in accept:
        page = f"<!doctype html><title>Not accepted</title><h1>Not accepted</h1><p>{escape(message)}</p>"
        return Refusal(status, "text/html; charset=utf-8", page.encode())
    return Refusal(status, "application/json", json.dumps(error_body(code, message)).encode())


def _accept(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"accept":
            return str(value.decode("latin-1"))
    return ""


async def _refuse(send: Send, refusal: Refusal) -> None:
    status, content_type, body = refusal
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestSizeMiddleware(MiddlewareMixin):
    """Django: the same refusal for a declared body over RAG_MAX_REQUEST_BYTES, before CSRF
    or any view parses it (covers servers other than the ASGI stack, and the test client)."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        limit = settings.RAG_MAX_REQUEST_BYTES
        if not content_length_over(request.META, limit):
            return None
        accept = request.headers.get("Accept", "")
        refusal = refusal_body(accept, FailureCode.REQUEST_TOO_LARGE, too_large_message(limit))
        return HttpResponse(refusal.body, content_type=refusal.content_type, status=refusal.status)
