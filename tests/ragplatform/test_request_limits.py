"""Bodies over the limits are refused without being read: raw ASGI and WSGI requests whose
body streams count what the server took from them."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler

from apps.corpus.models import Document
from ragplatform.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

CHUNK = b"x" * 65536


class EndlessBody:
    """An ASGI receive() that sends body chunks for as long as it is asked."""

    def __init__(self) -> None:
        self.read = 0

    async def __call__(self) -> dict[str, Any]:
        self.read += len(CHUNK)
        return {"type": "http.request", "body": CHUNK, "more_body": True}


async def _asgi_post(path: str, headers: list[tuple[bytes, bytes]], receive: Any) -> list[Any]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"testserver"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    await application(scope, receive, send)
    return sent


async def test_a_declared_body_over_the_limit_is_refused_unread(settings: LazySettings) -> None:
    settings.RAG_MAX_REQUEST_BYTES = 1024 * 1024
    body = EndlessBody()
    sent = await _asgi_post(
        "/admin/corpus/document/upload/", [(b"content-length", b"10000000000")], body
    )
    assert sent[0]["status"] == 413
    assert body.read == 0
    assert "limit" in json.loads(sent[1]["body"])["error"]["message"]


@pytest.mark.parametrize(
    "headers",
    [
        [(b"content-type", b"multipart/form-data; boundary=b")],  # no length at all
        [(b"content-length", b"10")],  # a length the body does not keep to
    ],
    ids=["undeclared", "understated"],
)
async def test_a_body_beyond_its_declared_length_is_cut_off_at_the_limit(
    settings: LazySettings, headers: list[tuple[bytes, bytes]]
) -> None:
    settings.RAG_MAX_REQUEST_BYTES = 1024 * 1024
    body = EndlessBody()
    sent = await _asgi_post("/api/documents/", headers, body)
    assert sent[0]["status"] == 413
    assert body.read <= settings.RAG_MAX_REQUEST_BYTES + len(CHUNK)


class CountingInput(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.taken += len(chunk)
        return chunk


def _multipart(filename: str, data: bytes) -> bytes:
    return (
        b'--b\r\nContent-Disposition: form-data; name="collection"\r\n\r\nIT\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="'
        + filename.encode()
        + b'"\r\nContent-Type: text/plain\r\n\r\n'
        + data
        + b"\r\n--b--\r\n"
    )


def _wsgi_upload(body: bytes, *, declared: int) -> tuple[str, bytes, CountingInput]:
    User.objects.create_user("ada", password="a-long-test-password")
    stream = CountingInput(body)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/documents/",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": stream,
        "CONTENT_TYPE": "multipart/form-data; boundary=b",
        "CONTENT_LENGTH": str(declared),
        # Basic auth (development only) needs no CSRF token, so the request stays raw.
        "HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"ada:a-long-test-password").decode(),
    }
    status: list[str] = []

    def start_response(line: str, headers: Any, *_: Any) -> Any:
        status.append(line)
        return lambda data: None

    chunks = WSGIHandler()(environ, start_response)
    return status[0], b"".join(chunks), stream


def test_the_api_refuses_a_large_declared_upload_before_reading(settings: LazySettings) -> None:
    settings.RAG_MAX_UPLOAD_BYTES = 1000
    body = _multipart("big.txt", b"a" * 3 * 1024 * 1024)
    status, content, stream = _wsgi_upload(body, declared=len(body))
    assert status.startswith("413")
    assert json.loads(content)["error"]["code"] == "file_too_large"
    assert stream.taken == 0
    assert not Document.objects.exists()


def test_the_upload_handler_stops_reading_a_file_at_the_limit(settings: LazySettings) -> None:
    settings.RAG_MAX_UPLOAD_BYTES = 1000
    # Under the Content-Length allowance (the limit plus the form fields), over the file limit.
    body = _multipart("big.txt", b"a" * 900_000)
    status, content, stream = _wsgi_upload(body, declared=len(body))
    assert status.startswith("413"), content
    assert "big.txt is larger than the limit" in json.loads(content)["error"]["message"]
    assert stream.taken < len(body) // 2
    assert not Document.objects.exists()


def test_django_refuses_a_declared_body_over_the_request_limit(
    admin_client: Any, settings: LazySettings
) -> None:
    settings.RAG_MAX_REQUEST_BYTES = 2048
    response = admin_client.post(
        "/admin/corpus/document/upload/", b"x" * 4096, content_type="application/octet-stream"
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    assert not Document.objects.exists()


async def test_a_browser_gets_a_page_not_json(settings: LazySettings) -> None:
    settings.RAG_MAX_REQUEST_BYTES = 1024 * 1024
    headers = [(b"content-length", b"10000000000"), (b"accept", b"text/html,*/*")]
    sent = await _asgi_post("/admin/corpus/document/upload/", headers, EndlessBody())
    assert sent[0]["status"] == 413
    assert (b"content-type", b"text/html; charset=utf-8") in sent[0]["headers"]
    assert b"larger than the limit of 1.0" in sent[1]["body"]
