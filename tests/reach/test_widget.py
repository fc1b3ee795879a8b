"""The widget's gate: which origins it answers (preflight and request), its key, its
collections, and bad questions refused with a clear message before any turn is stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import connections
from django.http import StreamingHttpResponse
from django.test import AsyncClient, Client

from apps.answers.models import Turn, TurnClient
from apps.answers.providers.registry import providers_override
from apps.answers.turn.entry import turns_launched_wait
from apps.reach.widget.origins import origin_allowed, origin_normal, origins_parse
from tests.answers.fakes import handbook_load, providers_fake
from tests.conftest import CountingEmbedder

HOST = "https://intranet.example.org"
KEY = "pk-widget-test-key-0123456789"
URL = "/widget/ask"


# --- The script, its words in the reader's language ----------------------------------------


def _script_config(script: str) -> dict[str, Any]:
    line = next(line for line in script.splitlines() if "const CONFIG = " in line)
    return dict(json.loads(line.split("const CONFIG = ", 1)[1].rstrip(";")))


@pytest.mark.parametrize(
    ("language", "title", "band"),
    [("en", "Ask the documents", "High confidence"), ("fa", "از اسناد بپرسید", "اطمینان زیاد")],
)
def test_the_script_carries_its_words_in_the_readers_language_and_the_address_it_asks(
    client: Client, language: str, title: str, band: str
) -> None:
    response = client.get("/widget/widget.js", HTTP_ACCEPT_LANGUAGE=language)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "Accept-Language" in response["Vary"]
    config = _script_config(response.content.decode())
    assert config["ask_path"] == URL
    assert config["words"]["title"] == title
    assert config["words"]["bands"]["green"] == band


def test_the_script_is_only_read(client: Client) -> None:
    assert client.post("/widget/widget.js").status_code == 405


# --- The origin check, pure ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("https://Intranet.Example.org", "https://intranet.example.org"),
        ("https://intranet.example.org:443", "https://intranet.example.org"),
        ("http://127.0.0.2:8123", "http://127.0.0.2:8123"),
        ("https://intranet.example.org/", None),  # a path, however short
        ("https://intranet.example.org/wiki", None),
        ("*", None),
        ("null", None),  # what sandboxed frames and file: pages send
        ("ftp://intranet.example.org", None),
        ("https://user@intranet.example.org", None),
        ("https://intranet.example.org:99999", None),
    ],
)
def test_an_origin_is_normalised_or_refused(raw: str, normal: str | None) -> None:
    assert origin_normal(raw) == normal


def test_only_a_listed_origin_is_allowed() -> None:
    allowed = origins_parse([HOST, "http://127.0.0.2:8123"], name="X")
    assert origin_allowed(origin=HOST, allowed=allowed)
    assert origin_allowed(origin="HTTPS://intranet.example.org:443", allowed=allowed)
    assert not origin_allowed(origin="https://intranet.example.org.evil.test", allowed=allowed)
    assert not origin_allowed(origin="http://intranet.example.org", allowed=allowed)  # scheme
    assert not origin_allowed(origin="http://127.0.0.2:8124", allowed=allowed)  # port
    assert not origin_allowed(origin=None, allowed=allowed)
    assert not origin_allowed(origin="null", allowed=allowed)


@pytest.mark.parametrize("bad", ["*", "https://intranet.example.org/wiki", "intranet"])
def test_a_wildcard_or_a_url_in_the_setting_stops_start_up(bad: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="RAG_WIDGET_ALLOWED_ORIGINS"):
        origins_parse([HOST, bad], name="RAG_WIDGET_ALLOWED_ORIGINS")


# --- The endpoint ------------------------------------------------------------------------------


@pytest.fixture
def widget(settings: LazySettings, django_user_model: type[User]) -> User:
    settings.RAG_WIDGET_ALLOWED_ORIGINS = [HOST]
    settings.RAG_WIDGET_KEY = KEY
    settings.RAG_WIDGET_USER = "widget"
    settings.RAG_WIDGET_COLLECTIONS = ["Handbook"]
    settings.RAG_MAX_QUESTION_CHARS = 200
    return django_user_model.objects.create_user("widget", password="a-long-test-password")


def _post(client: Client, body: object, *, origin: str = HOST, key: str = KEY) -> dict[str, Any]:
    response = client.post(
        URL,
        data=json.dumps(body),
        content_type="application/json",
        headers={"Origin": origin, "X-Widget-Key": key},
    )
    return {"status": response.status_code, "headers": response.headers, "body": response.json()}


@pytest.fixture
def answering(embedder: CountingEmbedder) -> Iterator[None]:
    """The handbook ingested and fake providers answering, for a question that is asked."""
    handbook_load(embedder)
    with providers_override(providers_fake(embedder)):
        yield


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("answering")
async def test_a_question_asked_through_the_widget_is_a_turn_recorded_as_the_widgets(
    widget: User,
) -> None:
    response = await AsyncClient().post(
        URL,
        data=json.dumps({"question": "How many days of annual leave?"}),
        content_type="application/json",
        headers={"Origin": HOST, "X-Widget-Key": KEY},
    )
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    body = b"".join([chunk async for chunk in response.streaming_content]).decode()
    await turns_launched_wait(timeout_s=10)
    await sync_to_async(connections.close_all)()

    assert "\nevent: reply\n" in body  # the answer streamed to its end
    turn = await Turn.objects.select_related("conversation").aget()
    assert turn.client == TurnClient.WIDGET and turn.conversation.user_id == widget.pk


@pytest.mark.django_db(transaction=True)
def test_the_preflight_of_a_listed_origin_allows_exactly_it(client: Client, widget: User) -> None:
    response = client.options(
        URL,
        headers={
            "Origin": HOST,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, x-widget-key",
        },
    )
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == HOST
    assert "X-Widget-Key" in response.headers["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in response.headers
    assert "Origin" in response.headers["Vary"]


@pytest.mark.django_db(transaction=True)
def test_another_origin_is_refused_at_the_preflight_and_the_request(
    client: Client, widget: User
) -> None:
    other = "https://elsewhere.example.net"
    preflight = client.options(URL, headers={"Origin": other})
    assert preflight.status_code == 403
    assert "Access-Control-Allow-Origin" not in preflight.headers
    asked = _post(client, {"question": "How many days of leave?"}, origin=other)
    assert asked["status"] == 403
    assert "Access-Control-Allow-Origin" not in asked["headers"]
    assert asked["body"]["error"]["message"] == "This page's origin may not use the widget"
    assert not Turn.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_request_without_an_origin_is_refused(client: Client, widget: User) -> None:
    response = client.post(URL, data="{}", content_type="application/json")
    assert response.status_code == 403


@pytest.mark.django_db(transaction=True)
def test_a_wrong_key_is_refused_with_a_message_the_page_can_read(
    client: Client, widget: User
) -> None:
    asked = _post(client, {"question": "How many days of leave?"}, key="pk-guessed")
    assert asked["status"] == 401
    assert asked["headers"]["Access-Control-Allow-Origin"] == HOST
    assert asked["body"]["error"] == {
        "code": "unauthenticated",
        "message": "The widget key is wrong",
    }
    assert not Turn.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"question": ""}, 400, "empty"),
        ({"question": "   "}, 400, "empty"),
        ({"question": "x" * 201}, 400, "200"),
        ({"question": 7}, 400, ""),
        (["not", "an", "object"], 400, "JSON object"),
        ({"question": "Leave?", "collections": ["Board"]}, 403, "Board"),
        ({"question": "Leave?", "collections": "Handbook"}, 403, "list"),
    ],
)
def test_bad_input_is_refused_clearly_and_nothing_is_asked(
    client: Client, widget: User, body: object, status: int, message: str
) -> None:
    asked = _post(client, body)
    assert asked["status"] == status
    assert message.lower() in asked["body"]["error"]["message"].lower()
    assert asked["headers"]["Access-Control-Allow-Origin"] == HOST
    assert not Turn.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_malformed_json_is_refused(client: Client, widget: User) -> None:
    response = client.post(
        URL,
        data="{",
        content_type="application/json",
        headers={"Origin": HOST, "X-Widget-Key": KEY},
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "The body is not valid JSON"


@pytest.mark.django_db(transaction=True)
def test_a_deactivated_widget_account_turns_the_widget_off(client: Client, widget: User) -> None:
    widget.is_active = False
    widget.save()
    asked = _post(client, {"question": "How many days of leave?"})
    assert asked["status"] == 404
    assert "account" in asked["body"]["error"]["message"]


@pytest.mark.django_db(transaction=True)
def test_without_a_key_the_widget_is_off(
    client: Client, widget: User, settings: LazySettings
) -> None:
    settings.RAG_WIDGET_KEY = ""
    asked = _post(client, {"question": "How many days of leave?"}, key="")
    assert asked["status"] == 404
    assert "not configured" in asked["body"]["error"]["message"]
