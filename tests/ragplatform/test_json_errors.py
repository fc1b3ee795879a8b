"""Every JSON endpoint of the platform answers its errors in one body,
{"error": {"code": <a FailureCode value>, "message": <text>}}: the REST API (documents
included), the SSE endpoints, the chat's JSON actions, the admin's progress poll and the
request-size limit; for signed-out callers, unknown objects, bad input and wrong methods."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.utils import override_settings

from ragplatform.errors import FailureCode

pytestmark = pytest.mark.django_db

NO_CONVERSATION = "00000000-0000-0000-0000-000000000000"
JSON = "application/json"
SSE = "text/event-stream"


@dataclass(frozen=True)
class Case:
    method: str
    path: str
    who: str  # "anonymous", "user" or "admin"
    status: int
    code: FailureCode
    body: Any = None
    content_type: str = JSON
    accept: str = JSON
    settings: dict[str, Any] = field(default_factory=dict)


def _cases() -> list[Case]:
    anon, user, admin = "anonymous", "user", "admin"
    unauth, nf = FailureCode.UNAUTHENTICATED, FailureCode.NOT_FOUND
    bad, method = FailureCode.INVALID_REQUEST, FailureCode.METHOD_NOT_ALLOWED
    conversation = f"/api/conversations/{NO_CONVERSATION}/"
    progress = "/admin/corpus/document/progress/"
    return [
        # The REST API.
        Case("get", "/api/conversations/", anon, 401, unauth),
        Case("get", conversation, user, 404, nf),
        Case("put", conversation, user, 405, method, body={"title": "x"}),
        Case("get", f"/api/conversations/{NO_CONVERSATION}/turns/", user, 404, nf),
        Case("get", "/api/turns/999999/", user, 404, nf),
        Case("get", "/api/collections/", anon, 401, unauth),
        Case("post", "/api/answers/", anon, 401, unauth, body={"question": "Leave?"}),
        Case("get", "/api/answers/", user, 405, method),
        Case("post", "/api/answers/", user, 400, bad, body=["not", "an", "object"]),
        Case(
            "post",
            "/api/answers/",
            user,
            415,
            FailureCode.UNSUPPORTED_MEDIA_TYPE,
            body="q?",
            content_type="text/plain",
        ),
        Case(
            "post",
            "/api/answers/",
            user,
            413,
            FailureCode.REQUEST_TOO_LARGE,
            body={"question": "x" * 4096},
            settings={"RAG_MAX_REQUEST_BYTES": 1024},
        ),
        # The documents API.
        Case("get", "/api/documents/", anon, 401, unauth),
        Case("get", "/api/documents/999999/", user, 404, nf),
        Case("delete", "/api/documents/999999/", user, 405, method),
        Case("post", "/api/documents/", admin, 400, bad, body={}, content_type="multipart"),
        Case("post", "/api/documents/", user, 403, FailureCode.FORBIDDEN, content_type="file"),
        Case("post", "/api/documents/", admin, 415, FailureCode.UNSUPPORTED_MEDIA_TYPE, body={}),
        # The SSE endpoints (their errors are JSON, not a stream).
        Case("post", "/api/turns/", anon, 401, unauth, body={"question": "Leave?"}, accept=SSE),
        Case("get", "/api/turns/", user, 405, method, accept=SSE),
        Case("post", "/api/turns/", user, 406, FailureCode.NOT_ACCEPTABLE, body={"q": 1}),
        Case("post", "/api/turns/", user, 400, bad, body=[1], accept=SSE),
        Case("get", "/api/turns/999999/events", anon, 401, unauth, accept=SSE),
        Case("get", "/api/turns/999999/events", user, 404, nf, accept=SSE),
        Case("get", "/api/turns/999999/events?last_seq=x", user, 400, bad, accept=SSE),
        Case("post", "/api/turns/999999/events", user, 405, method, accept=SSE),
        # The chat page's JSON actions.
        Case("get", "/turns/999999/sources/A/", anon, 401, unauth),
        Case("get", "/turns/999999/sources/A/", user, 404, nf),
        Case("post", "/turns/999999/sources/A/", user, 405, method),
        Case("post", "/turns/999999/feedback/", anon, 401, unauth, body={"rating": "up"}),
        Case("get", "/turns/999999/feedback/", user, 405, method),
        Case("post", "/turns/999999/feedback/", user, 404, nf, body={"rating": "up"}),
        Case("post", "/turns/999999/feedback/", user, 400, bad, body="{", content_type="raw"),
        Case("post", f"/c/{NO_CONVERSATION}/rename/", anon, 401, unauth, body={"title": "x"}),
        Case("post", f"/c/{NO_CONVERSATION}/rename/", user, 404, nf, body={"title": "x"}),
        Case("get", f"/c/{NO_CONVERSATION}/rename/", user, 405, method),
        Case("post", f"/c/{NO_CONVERSATION}/delete/", user, 404, nf),
        Case("get", "/conversations/", anon, 401, unauth),
        Case("get", "/conversations/?q=" + "x" * 1000, user, 400, bad),
        Case("get", "/documents/999999/chunks/0/", anon, 401, unauth),
        Case("get", "/documents/999999/chunks/0/", user, 404, nf),
        Case("post", "/documents/999999/chunks/0/", user, 405, method),
        # The admin's progress poll.
        Case("get", f"{progress}?ids=1", anon, 401, unauth),
        Case("get", f"{progress}?ids=x", admin, 400, bad),
        Case("post", f"{progress}?ids=1", admin, 405, method),
    ]


def _client(who: str) -> Client:
    client = Client()
    if who == "user":
        client.force_login(User.objects.create_user("ada", password="a-long-test-password"))
    elif who == "admin":
        client.force_login(User.objects.create_superuser("root", password="a-long-password"))
    return client


def _send(client: Client, case: Case) -> Any:
    headers = {"Accept": case.accept}
    call = getattr(client, case.method)
    if case.content_type == "multipart":
        return call(case.path, case.body, headers=headers)
    if case.content_type == "file":
        upload = {"file": SimpleUploadedFile("a.txt", b"hello"), "collection": "Default"}
        return call(case.path, upload, headers=headers)
    if case.content_type == "raw":
        return call(case.path, case.body, content_type=JSON, headers=headers)
    if case.body is None:
        return call(case.path, headers=headers)
    data = case.body if case.content_type != JSON else json.dumps(case.body)
    return call(case.path, data, content_type=case.content_type, headers=headers)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c.method} {c.path[:40]} {c.status}")
def test_every_json_error_has_the_one_body(case: Case) -> None:
    client = _client(case.who)
    with override_settings(**case.settings):
        response = _send(client, case)

    assert response.status_code == case.status, response.content[:300]
    assert response["Content-Type"].startswith(JSON)
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] in set(FailureCode)
    assert body["error"]["code"] == case.code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def test_a_wrong_method_names_the_allowed_ones() -> None:
    response = _client("user").get("/turns/1/feedback/")
    assert response.status_code == 405 and response["Allow"] == "POST"
