"""Token authentication for scripts (`Authorization: Token <key>`), and `manage.py api_token`."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password="a-long-test-password")


@pytest.fixture
def other(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("grace", password="another-test-password")


def _token(*args: str) -> str:
    out = StringIO()
    call_command("api_token", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def _with_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_token_signs_a_script_in_as_its_user(user: User, other: User) -> None:
    ConversationFactory.create(user=user, title="Mine")
    ConversationFactory.create(user=other, title="Theirs")
    key = _token("ada")

    response = _with_token(key).get("/api/conversations/")

    assert response.status_code == 200
    assert [c["title"] for c in response.json()["results"]] == ["Mine"]
    # Unsafe methods need no CSRF token with a token (no cookie is involved).
    conversation = ConversationFactory.create(user=user)
    renamed = _with_token(key).patch(
        f"/api/conversations/{conversation.pk}/", {"title": "Renamed"}, format="json"
    )
    assert renamed.status_code == 200


def test_the_command_returns_the_same_token_until_rotated(user: User) -> None:
    first = _token("ada")
    assert _token("ada") == first and len(first) == 40

    rotated = _token("ada", "--rotate")

    assert rotated != first
    assert list(Token.objects.values_list("key", flat=True)) == [rotated]
    assert _with_token(first).get("/api/conversations/").status_code == 401
    assert _with_token(rotated).get("/api/conversations/").status_code == 200


def test_the_command_refuses_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("api_token", "nobody", stdout=StringIO())


def test_a_deactivated_users_token_is_refused(user: User) -> None:
    key = _token("ada")
    user.is_active = False
    user.save()

    response = _with_token(key).get("/api/conversations/")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert response["WWW-Authenticate"] == "Token"
    err = StringIO()
    call_command("api_token", "ada", stdout=StringIO(), stderr=err)
    assert "deactivated" in err.getvalue()


def test_a_wrong_token_is_refused(db: None) -> None:
    response = _with_token("0" * 40).get("/api/collections/")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Invalid token."


def test_bad_tokens_from_one_address_are_throttled_before_the_next_is_read(
    user: User, settings: object
) -> None:
    settings.AXES_FAILURE_LIMIT = 3  # type: ignore[attr-defined]
    good = _token("ada")
    attacker = APIClient(REMOTE_ADDR="203.0.113.7")
    for n in range(3):
        attacker.credentials(HTTP_AUTHORIZATION=f"Token {'0' * 39}{n}")
        assert attacker.get("/api/conversations/").status_code == 401
    attacker.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert attacker.get("/api/conversations/").status_code == 429  # even the right token

    elsewhere = APIClient(REMOTE_ADDR="198.51.100.2")
    elsewhere.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert elsewhere.get("/api/conversations/").status_code == 200
