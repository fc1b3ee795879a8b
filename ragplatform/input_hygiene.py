"""Text the database cannot store, and JSON too deep to walk, refused in one place.

PostgreSQL's text cannot hold NUL, and UTF-8 cannot encode a lone surrogate (a JSON body may
write one as "\\ud800"): either reaching the database raises a server error far from the
request that brought it. So every request is checked before any view reads it: the query
string and any body that parses as JSON (whatever its Content-Type says, since the JSON views
read `request.body` themselves), every string in it, keys included, at any depth up to
RAG_MAX_JSON_DEPTH. The chat socket parses its messages with `json_parse`, the same rules.
Bad text is refused with the field it was in, not cleaned: silently changing a question or a
collection name would answer or file something the sender did not write.

Form bodies (urlencoded or multipart) decode as UTF-8 with replacement, so they cannot carry
a lone surrogate, and their fields are read through Django's or DRF's form fields, which
refuse NUL (ProhibitNullCharactersValidator); the one plain form field, a conversation's new
title, drops it (`conversation_title_clean`). Parsing a multipart body here would read the
files before the upload views' own checks.

The body read here is bounded by DATA_UPLOAD_MAX_MEMORY_SIZE (RAG_MAX_JSON_BYTES): a larger
non-file body is refused with the platform's JSON error (413), where Django would answer its
own HTML 400 page. Multipart bodies are left to the upload handlers, which stream files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import gettext as _

from ragplatform.errors import FailureCode
from ragplatform.request_limits import refusal_body, too_large_message

_FIELD_CHARS = 80  # of a field's path in a message: a 50 000-character key stays out of it


class InvalidInput(ValueError):
    """Input no view should see: text the database cannot store, or JSON nested too deep."""


def text_problem(value: str) -> str | None:
    """What is wrong with one string for storage, or None."""
    if "\x00" in value:
        return _("contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _("contains an unpaired surrogate (not valid Unicode text)")
    return None


def text_check(value: str, *, field: str) -> None:
    """Raise InvalidInput naming `field` when `value` could not be stored."""
    problem = text_problem(value)
    if problem is not None:
        shown = field if len(field) <= _FIELD_CHARS else field[:_FIELD_CHARS] + "…"
        raise InvalidInput(_("%(field)s %(problem)s") % {"field": shown, "problem": problem})


def json_parse(raw: str | bytes, *, field: str = "body") -> Any:
    """The JSON value of `raw`, checked: ValueError for text that is not JSON (JSONDecodeError),
    InvalidInput for JSON deeper than RAG_MAX_JSON_DEPTH or holding text that cannot be stored."""
    try:
        value = json.loads(raw)
    except RecursionError:  # far deeper than any limit: the parser itself gave up
        raise InvalidInput(_depth_message()) from None
    json_value_check(value, field=field)
    return value


def json_value_check(value: Any, *, field: str = "body") -> None:
    """Walk a parsed JSON value without recursion, checking its depth and every string."""
    limit = settings.RAG_MAX_JSON_DEPTH
    for path, depth, item in _walk(value, field):
        if depth > limit:
            raise InvalidInput(_depth_message())
        if isinstance(item, str):
            text_check(item, field=path)


def _walk(value: Any, field: str) -> Iterator[tuple[str, int, Any]]:
    pending: list[tuple[str, int, Any]] = [(field, 0, value)]
    while pending:
        path, depth, item = pending.pop()
        yield path, depth, item
        if isinstance(item, dict):
            for key, inner in item.items():
                yield f"{path} key", depth + 1, key
                # A key is checked (yielded) before its value is walked: no path holds bad text.
                pending.append((f"{path}.{key}", depth + 1, inner))
        elif isinstance(item, list):
            pending.extend((f"{path}[{i}]", depth + 1, inner) for i, inner in enumerate(item))


def _depth_message() -> str:
    return _("The JSON is nested deeper than %(limit)d levels") % {
        "limit": settings.RAG_MAX_JSON_DEPTH
    }


class InputHygieneMiddleware(MiddlewareMixin):
    """Refuses a request whose query string or body holds what `json_parse` refuses (400
    `invalid_request`), or whose non-file body is over RAG_MAX_JSON_BYTES (413)."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        try:
            for key, values in request.GET.lists():
                text_check(key, field=_("The query parameter name"))
                for value in values:
                    text_check(value, field=key)
            _body_check(request)
        except RequestDataTooBig:
            message = too_large_message(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
            return _refused(request, FailureCode.REQUEST_TOO_LARGE, message)
        except InvalidInput as exc:
            return _refused(request, FailureCode.INVALID_REQUEST, str(exc))
        return None


def _body_check(request: HttpRequest) -> None:
    content_type = request.content_type or ""
    if request.method in {"GET", "HEAD", "OPTIONS"} or content_type.startswith("multipart/"):
        return
    body = request.body  # RequestDataTooBig past DATA_UPLOAD_MAX_MEMORY_SIZE
    if content_type == "application/x-www-form-urlencoded":
        return  # form fields: see the module's docstring
    if body:
        try:
            json_parse(body)
        except InvalidInput:
            raise
        except ValueError:  # not JSON (nor UTF-8): the view that reads it says what it expects
            return


def _refused(request: HttpRequest, code: FailureCode, message: str) -> HttpResponse:
    refusal = refusal_body(request.headers.get("Accept", ""), code, message)
    return HttpResponse(refusal.body, content_type=refusal.content_type, status=refusal.status)
