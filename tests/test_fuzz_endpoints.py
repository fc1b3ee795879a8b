"""Odd requests to every endpoint get a 4xx with a message (or a normal answer), never a 500.

Each URL the project routes is called with odd methods, bodies, headers and query strings,
signed in as a superuser (every permission, so the views run past their gates) and signed out.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import hypothesis
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.db import connections
from django.test import AsyncClient, Client
from hypothesis import HealthCheck
from hypothesis import strategies as st

from apps.answers.models import Turn, TurnFeedback
from apps.answers.providers.registry import providers_override
from apps.answers.turn.entry import turns_launched_wait
from apps.corpus.models import Document
from tests.answers.fakes import providers_fake
from tests.answers.sockets import connected
from tests.answers.sse import SSE, frames
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory, ConversationFactory, TurnFactory

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


@pytest.mark.django_db
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


# --- Hostile input: text the database cannot store, deep JSON, big bodies ------------------
# Each of these was a 500 (UnicodeEncodeError, DataError, RecursionError) or Django's HTML 400.

DEEP = b"[" * 100_000 + b"]" * 100_000  # past Python's own recursion limit
JUST_TOO_DEEP = b"[" * 40 + b'"q"' + b"]" * 40  # RAG_MAX_JSON_DEPTH is 32
HOSTILE: list[tuple[str, dict[str, Any] | bytes]] = [
    ("lone surrogate in a question", {"question": "\ud800", "rating": "up"}),
    ("NUL in a question", {"question": "what\x00now", "rating": "up"}),
    ("lone surrogate in a collection", {"question": "Leave?", "collections": ["\udfff"]}),
    ("NUL in a collection", {"question": "Leave?", "collections": ["IT\x00"]}),
    ("lone surrogate in a key", {"\ud800": 1, "question": "Leave?"}),
    ("NUL in a comment", {"rating": "up", "comment": "fine\x00"}),
    ("lone surrogate in a comment", {"rating": "down", "comment": "\udc00 no"}),
    ("JSON deeper than Python recurses", DEEP),
    ("JSON deeper than the limit", JUST_TOO_DEEP),
]


def _encoded(body: dict[str, Any] | bytes) -> bytes:
    # json.dumps writes a lone surrogate as the escape "\ud800", as a hostile client would.
    return body if isinstance(body, bytes) else json.dumps(body).encode()


@pytest.fixture
def asker(db: None, django_user_model: type[User]) -> tuple[Client, Turn]:
    """A signed-in reader with one finished answer of their own (feedback needs one)."""
    user = django_user_model.objects.create_user("ada", password="a-long-test-password")
    client = Client(raise_request_exception=False)
    client.force_login(user)
    turn = TurnFactory.create(conversation=ConversationFactory.create(user=user))
    return client, turn


def _json_posts(turn: Turn) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("/api/answers/", {}),
        ("/api/turns/", {"HTTP_ACCEPT": "text/event-stream"}),
        (f"/turns/{turn.pk}/feedback/", {"HTTP_ACCEPT": "application/json"}),
    ]


@pytest.mark.parametrize(("name", "body"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_hostile_json_is_a_400_with_a_message(
    name: str, body: dict[str, Any] | bytes, asker: tuple[Client, Turn]
) -> None:
    client, turn = asker
    turns_before = Turn.objects.count()
    for path, headers in _json_posts(turn):
        response = client.post(path, _encoded(body), content_type="application/json", **headers)
        assert response.status_code == 400, (path, response.status_code)
        error = response.json()["error"]
        assert error["code"] == "invalid_request" and error["message"], path
    # Nothing was stored: no turn, no feedback.
    assert Turn.objects.count() == turns_before
    assert not TurnFeedback.objects.exists()


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/conversations/", {"q": "wire\x00guard"}),
        ("/admin/corpus/document/", {"q": "a\x00"}),
        ("/api/documents/", {"\x00": "1"}),
    ],
)
def test_nul_in_a_query_string_is_a_400(
    path: str, query: dict[str, str], asker: tuple[Client, Turn]
) -> None:
    client, _ = asker
    response = client.get(path, query, HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert "NUL" in response.json()["error"]["message"]


@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_nul_in_a_form_field_never_reaches_the_database(
    encoding: str, asker: tuple[Client, Turn]
) -> None:
    # Form fields go through the form's own cleaning (ragplatform/input_hygiene.py says why).
    client, turn = asker
    path, fields = f"/c/{turn.conversation_id}/rename/", {"title": "new\x00title"}
    if encoding == "multipart":
        response = client.post(path, fields, HTTP_ACCEPT="application/json")
    else:
        body = urlencode(fields)
        response = client.post(
            path,
            body,
            content_type="application/x-www-form-urlencoded",
            HTTP_ACCEPT="application/json",
        )
    assert response.status_code == 200
    turn.conversation.refresh_from_db()
    assert turn.conversation.title == "newtitle"


def test_a_large_json_body_gets_the_json_error_body(asker: tuple[Client, Turn]) -> None:
    client, turn = asker
    body = json.dumps({"question": "Leave?", "padding": "x" * (5 * 1024 * 1024)}).encode()
    for path, headers in _json_posts(turn):
        response = client.post(path, body, content_type="application/json", **headers)
        assert response.status_code == 413, path
        assert response.json()["error"]["code"] == "request_too_large", path


def test_the_documents_api_answers_errors_in_the_one_shape(asker: tuple[Client, Turn]) -> None:
    client, _ = asker
    for response in (
        client.get("/api/documents/999999/"),
        client.get("/api/documents/", {"page": "999"}),
        client.put("/api/documents/"),
        client.post("/api/documents/", {}),
        Client().get("/api/documents/"),
    ):
        assert response.status_code in {400, 401, 403, 404, 405}
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("name", "body"), HOSTILE, ids=[name for name, _ in HOSTILE])
async def test_hostile_socket_messages_get_a_failed_event(
    name: str, body: dict[str, Any] | bytes, django_user_model: type[User]
) -> None:
    user = await django_user_model.objects.acreate(username="ada")
    communicator = await connected(user)
    try:
        message = _encoded({"type": "ask", **body} if isinstance(body, dict) else body)
        await communicator.send_to(text_data=message.decode())
        reply = await communicator.receive_json_from(timeout=10)
        assert reply["type"] == "failed", reply
        assert reply["data"]["code"] == "invalid_request" and reply["data"]["message"]
        # The socket is still open and still answers.
        await communicator.send_to(text_data='{"type": "nope"}')
        assert (await communicator.receive_json_from(timeout=10))["type"] == "failed"
    finally:
        await communicator.disconnect()
        await sync_to_async(connections.close_all)()
    assert not await Turn.objects.filter(conversation__user=user).aexists()


# --- Random JSON and unicode (hypothesis) ---------------------------------------------------

TEXT = st.text(
    alphabet=st.characters(categories=["Cs", "Cc", "Cf", "Lo", "Ll", "Nd", "Zs", "Mn"]),
    max_size=12,
) | st.sampled_from(["\ud800", "\x00", "Leave?", "Handbook", "up", "ask", "resume", ""])
FIELDS = st.sampled_from(
    ["type", "question", "collections", "conversation", "turn", "last_seq", "rating", "comment"]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)
QUESTIONS = st.fixed_dictionaries(
    {"type": st.just("ask"), "question": TEXT, "rating": st.just("up")},
    optional={"collections": st.lists(TEXT, max_size=2), "comment": TEXT},
)
RANDOM_BODIES = st.one_of(
    QUESTIONS.map(lambda d: json.dumps(d).encode()),
    st.dictionaries(FIELDS | TEXT, JSON_VALUES, max_size=4).map(lambda d: json.dumps(d).encode()),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=40),
    st.integers(min_value=1, max_value=5000).map(lambda depth: b"[" * depth + b"]" * depth),
)
SENTINEL = '{"type": "sentinel"}'  # unknown: the socket answers it with a failed rejection


@pytest.fixture
def reader(
    transactional_db: None,
    django_user_model: type[User],
    embedder: CountingEmbedder,
    settings: LazySettings,
) -> Iterator[tuple[User, Turn]]:
    settings.RAG_ASKS_PER_MINUTE = 10_000  # the property is about the input, not the rate
    user = django_user_model.objects.create_user("ada", password="a-long-test-password")
    with providers_override(providers_fake(embedder)):
        yield user, TurnFactory.create(conversation=ConversationFactory.create(user=user))
    connections.close_all()


@hypothesis.settings(
    max_examples=40,
    deadline=None,
    database=None,  # no example folder left in the checkout; each run draws afresh
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@hypothesis.given(body=RANDOM_BODIES)
def test_random_input_never_fails_the_server(body: bytes, reader: tuple[User, Turn]) -> None:
    user, turn = reader
    client = Client(raise_request_exception=False)
    client.force_login(user)
    for path in ("/api/answers/", f"/turns/{turn.pk}/feedback/"):
        response = client.post(path, body, content_type="application/json")
        assert response.status_code < 500, (path, response.content[:300])
    async_client = AsyncClient(raise_request_exception=False)
    async_client.force_login(user)
    async_to_sync(_streams_never_fail)(async_client, user, body)


async def _streams_never_fail(client: AsyncClient, user: User, body: bytes) -> None:
    response = await client.post("/api/turns/", body, content_type="application/json", headers=SSE)
    assert response.status_code < 500
    if response.status_code == 200:
        assert (await frames(response))[-1]["event"] in {"finished", "failed"}
    communicator = await connected(user)
    try:
        await communicator.send_to(text_data=body.decode(errors="replace") or " ")
        await communicator.send_to(text_data=SENTINEL)
        while True:  # every reply is a typed event (never a close) up to the sentinel's
            reply = await communicator.receive_json_from(timeout=10)
            assert isinstance(reply.get("type"), str), reply
            if reply["type"] == "failed" and reply["seq"] == 0 and "Unknown" in str(reply):
                break
    finally:
        await communicator.disconnect()
        await turns_launched_wait(timeout_s=10)
