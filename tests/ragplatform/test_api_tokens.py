"""Token authentication for scripts (`Authorization: Token <key>`), and `manage.py api_token`."""

from __future__ import annotations

import importlib
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ragplatform.api_tokens import token_digest
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


def test_the_key_is_shown_once_and_rotation_replaces_it(user: User) -> None:
    first = _token("ada")
    assert len(first) == 40
    with pytest.raises(CommandError, match="cannot be shown again"):
        call_command("api_token", "ada", stdout=StringIO())

    rotated = _token("ada", "--rotate")

    assert rotated != first
    assert list(Token.objects.values_list("key", flat=True)) == [token_digest(rotated)]
    assert _with_token(first).get("/api/conversations/").status_code == 401
    assert _with_token(rotated).get("/api/conversations/").status_code == 200


def test_the_database_holds_no_key_that_signs_in(user: User) -> None:
    key = _token("ada")
    (stored,) = Token.objects.values_list("key", flat=True)
    assert stored != key
    assert _with_token(stored).get("/api/conversations/").status_code == 401


def test_the_migration_hashes_stored_keys_and_they_keep_working(user: User) -> None:
    # A token as DRF stored it before: the plaintext key in the table.
    plain = Token.objects.create(user=user).key
    migration = importlib.import_module("ragplatform.migrations.0003_api_tokens_hashed")

    migration.keys_hash(django_apps, None)

    assert list(Token.objects.values_list("key", flat=True)) == [token_digest(plain)]
    assert _with_token(plain).get("/api/conversations/").status_code == 200


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
    call_command("api_token", "ada", "--rotate", stdout=StringIO(), stderr=err)
    assert "deactivated" in err.getvalue()


def test_a_wrong_token_is_refused(db: None) -> None:
    response = _with_token("0" * 40).get("/api/collections/")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Invalid token."


def _get(key: str | None, ip: str) -> int:
    client = APIClient(REMOTE_ADDR=ip)
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/conversations/").status_code


def test_a_bad_token_locks_out_only_itself(user: User, settings: object) -> None:
    settings.RAG_TOKEN_FAILURE_LIMIT = settings.AXES_FAILURE_LIMIT = 3  # type: ignore[attr-defined]
    good, stale = _token("ada"), "0" * 40
    for _ in range(3):
        assert _get(stale, "203.0.113.7") == 401
    # The bad token itself, from that address: refused unread.
    refused = APIClient(REMOTE_ADDR="203.0.113.7")
    refused.credentials(HTTP_AUTHORIZATION=f"Token {stale}")
    response = refused.get("/api/conversations/")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    # Everyone else behind the same address (an office's NAT) is served as before: a valid
    # token, a browser session, a request with no token at all.
    assert _get(good, "203.0.113.7") == 200
    assert _get(None, "203.0.113.7") in {401, 403}  # not signed in, not throttled
    session = APIClient(REMOTE_ADDR="203.0.113.7")
    session.force_login(user)
    assert session.get("/api/conversations/").status_code == 200
    assert _get("1" * 40, "203.0.113.7") == 401  # another bad token is judged on its own
    assert _get(stale, "198.51.100.2") == 401  # and the stale one from elsewhere


def test_a_deactivated_users_token_is_not_counted(user: User, settings: object) -> None:
    settings.RAG_TOKEN_FAILURE_LIMIT = 3  # type: ignore[attr-defined]
    key = _token("ada")
    User.objects.filter(pk=user.pk).update(is_active=False)
    for _ in range(4):
        assert _get(key, "203.0.113.7") == 401
    User.objects.filter(pk=user.pk).update(is_active=True)
    assert _get(key, "203.0.113.7") == 200  # it works again with the account
