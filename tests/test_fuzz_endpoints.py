"""Odd requests to every endpoint get a 4xx with a message (or a normal answer), never a 500.

Each URL the project routes is called with odd methods, bodies, headers and query strings,
signed in as a superuser (every permission, so the views run past their gates) and signed out.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.corpus.models import Document
from tests.factories import CollectionFactory

pytestmark = pytest.mark.django_db

HUGE = "9" * 5000
PATHS = [
    "/",
    "/c/00000000-0000-0000-0000-000000000000/",
    "/api/turns/",
    "/api/turns/1/events",
    f"/api/turns/{HUGE[:30]}/events",
    "/api/documents/",
    "/api/documents/{document}/",
    f"/api/documents/{HUGE[:30]}/",
    # A missing original on the source view is covered by that view's own tests.
    "/documents/1000000/source/",
    f"/documents/{HUGE[:30]}/source/",
    "/accounts/login/",
    "/accounts/logout/",
    "/admin/",
    "/admin/corpus/document/",
    "/admin/corpus/document/upload/",
    "/admin/corpus/document/{document}/change/",
    "/admin/corpus/document/{document}/original/",
    "/admin/corpus/document/%FF/original/",
    "/admin/corpus/chunk/",
    "/admin/corpus/collection/",
    "/admin/answers/turn/",
    "/admin/answers/conversation/",
]
QUERIES = [
    "",
    "last_seq=%C2%B2",
    f"last_seq={HUGE}",
    "last_seq=%FF%FE",
    "page=-1&p=abc&o=99&q=%00",
    "document=%D9%A1&collection__id__exact=x&status=nope",
    "_changelist_filters=%FF&all=&e=1",
    f"p={HUGE}",
]
BODIES: list[tuple[bytes, str]] = [
    (b"", "application/json"),
    (b"\xff\xfe\x00garbage", "application/json"),
    (b"[1, 2, 3]", "application/json"),
    (json.dumps({"question": "x" * 50_000, "collections": "IT"}).encode(), "application/json"),
    (
        json.dumps({"question": 7, "conversation": HUGE, "collections": [1, None]}).encode(),
        "application/json",
    ),
    (b"\xff\xfe=\xff", "application/x-www-form-urlencoded"),
    (b"--b\r\nbroken multipart", "multipart/form-data; boundary=b"),
    (b"file=x", "multipart/form-data"),
]
METHODS = ["get", "post", "put", "patch", "delete", "options", "head"]
HEADERS = [
    {},
    {"HTTP_ACCEPT": "text/event-stream"},
    {"HTTP_ACCEPT": "text/event-stream", "HTTP_LAST_EVENT_ID": "²"},
    {"HTTP_ACCEPT": "application/json; q=\xff", "HTTP_ACCEPT_LANGUAGE": "\xff" * 300},
]


def _paths(document_id: int) -> Iterator[str]:
    for path in PATHS:
        yield path.replace("{document}", str(document_id))


def _requests(document_id: int) -> Iterator[tuple[str, str, str, bytes, str, dict[str, str]]]:
    for path, method in itertools.product(_paths(document_id), METHODS):
        for query in QUERIES:
            yield path, method, query, b"", "", {}
        for (body, content_type), headers in itertools.product(BODIES, HEADERS):
            if method in {"post", "put", "patch"}:
                yield path, method, "", body, content_type, headers
        for headers, query in itertools.product(HEADERS[1:], ["", "last_seq=%C2%B2"]):
            yield path, method, query, b"", "", headers


def _call(client: Client, request: tuple[str, str, str, bytes, str, dict[str, str]]) -> Any:
    path, method, query, body, content_type, headers = request
    url = f"{path}?{query}" if query else path
    if method in {"post", "put", "patch"}:
        return getattr(client, method)(url, body, content_type=content_type, **headers)
    return getattr(client, method)(url, **headers)


@pytest.fixture
def document() -> Document:
    # A document whose original file was never stored: every path must cope with that too.
    return Document.objects.create(
        collection=CollectionFactory.create(),
        filename="gone.txt",
        file="documents/00/gone/gone.txt",
        mime_type="text/plain",
        sha256="0" * 64,
        size_bytes=10,
    )


@pytest.mark.parametrize("signed_in", [True, False], ids=["superuser", "anonymous"])
def test_no_request_makes_the_server_fail(
    signed_in: bool, document: Document, django_user_model: type[User]
) -> None:
    client = Client(raise_request_exception=False)
    if signed_in:
        client.force_login(django_user_model.objects.create_superuser("root", password="x"))
    failures = []
    for request in _requests(document.pk):
        response = _call(client, request)
        if response.status_code >= 500:
            failures.append((response.status_code, request[:3], request[4]))
    unique = sorted({(f[1][0], f[1][1]) for f in failures})
    assert not failures, unique
