"""Login throttling (django-axes, per address and account with a back-off) on the chat login,
the admin login and the API."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from axes.models import AccessAttempt
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.db import connections
from django.db.models import F
from django.test import AsyncClient, Client

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password"
LIMIT = 3


@pytest.fixture(autouse=True)
def _limit(settings: LazySettings) -> None:
    settings.AXES_FAILURE_LIMIT = LIMIT


@pytest.fixture
def ada(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("ada", password=PASSWORD, is_staff=True)


@pytest.fixture
def bob(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("bob", password=PASSWORD, is_staff=True)


def _login(url: str, username: str, password: str, ip: str) -> int:
    response = Client().post(url, {"username": username, "password": password}, REMOTE_ADDR=ip)
    return response.status_code


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_after_the_limit_even_the_right_password_is_refused(url: str, ada: User, bob: User) -> None:
    for _ in range(LIMIT - 1):
        assert _login(url, "ada", "wrong", "10.0.0.1") == 200  # the form again, with an error
    assert _login(url, "ada", "wrong", "10.0.0.1") == 429  # the failure that reaches the limit
    assert _login(url, "ada", PASSWORD, "10.0.0.1") == 429
    # Per account and address together: whoever failed cannot lock ada out from elsewhere...
    assert _login(url, "ada", PASSWORD, "10.0.0.2") == 302
    # ...nor everyone else behind 10.0.0.1 (an office's NAT).
    assert _login(url, "bob", PASSWORD, "10.0.0.1") == 302


def test_failures_against_many_accounts_from_one_address_lock_none_of_the_others(
    ada: User, bob: User
) -> None:
    for name in ("ada", "carol", "dave", "admin"):
        for _ in range(LIMIT - 1):
            _login("/accounts/login/", name, "wrong", "10.0.0.1")
    assert _login("/accounts/login/", "bob", PASSWORD, "10.0.0.1") == 302
    assert _login("/accounts/login/", "ada", PASSWORD, "10.0.0.1") == 302


def _age_failures(minutes: float) -> None:
    """As if the failures so far had happened `minutes` earlier."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=minutes))


def _retry_after(username: str, password: str, ip: str) -> int | None:
    """The lockout's Retry-After in whole minutes (rounded: the test takes a moment)."""
    response = Client().post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip
    )
    return round(int(response["Retry-After"]) / 60) if response.status_code == 429 else None


def test_each_failure_after_a_lockout_doubles_the_next(ada: User, settings: LazySettings) -> None:
    settings.RAG_LOGIN_COOLOFF = timedelta(minutes=15)
    settings.AXES_COOLOFF_TIME = timedelta(minutes=45)
    for _ in range(LIMIT - 1):
        _login("/accounts/login/", "ada", "wrong", "10.0.0.1")
    assert _retry_after("ada", "wrong", "10.0.0.1") == 15
    # Refused while locked out, the right password or a wrong one: not a guess, not counted.
    assert _retry_after("ada", "wrong", "10.0.0.1") == 15
    _age_failures(16)
    assert _login("/accounts/login/", "ada", "wrong", "10.0.0.1") == 429
    assert _retry_after("ada", PASSWORD, "10.0.0.1") == 30
    _age_failures(31)
    assert _retry_after("ada", "wrong", "10.0.0.1") == 45  # the longest lockout
    _age_failures(46)  # past the longest: the failures are forgotten
    assert _login("/accounts/login/", "ada", PASSWORD, "10.0.0.1") == 302


def test_a_successful_login_clears_the_failures(ada: User) -> None:
    for _ in range(LIMIT - 1):
        _login("/accounts/login/", "ada", "wrong", "10.0.0.1")
    assert _login("/accounts/login/", "ada", PASSWORD, "10.0.0.1") == 302
    for _ in range(LIMIT - 1):
        _login("/accounts/login/", "ada", "wrong", "10.0.0.1")
    assert _login("/accounts/login/", "ada", PASSWORD, "10.0.0.1") == 302


def test_the_lockout_page_says_what_happened(ada: User) -> None:
    for _ in range(LIMIT):
        _login("/accounts/login/", "ada", "wrong", "10.0.0.1")
    response = Client().post(
        "/accounts/login/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1"
    )
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert int(response["Retry-After"]) > 0


def test_api_basic_auth_failures_are_throttled_with_json(ada: User) -> None:
    def api(password: str) -> object:
        token = base64.b64encode(f"ada:{password}".encode()).decode()
        return Client().get(
            "/api/documents/", HTTP_AUTHORIZATION=f"Basic {token}", REMOTE_ADDR="10.0.0.9"
        )

    for _ in range(LIMIT - 1):
        assert api("wrong").status_code in {401, 403}  # type: ignore[attr-defined]
    api("wrong")
    locked = api(PASSWORD)
    assert locked.status_code == 429  # type: ignore[attr-defined]
    assert locked.json()["error"]["code"] == "login_locked"  # type: ignore[attr-defined]


def test_the_client_address_comes_from_trusted_proxies_only(
    ada: User, bob: User, settings: LazySettings
) -> None:
    settings.RAG_PROXY_COUNT = 1

    def login(username: str, password: str, forwarded: str) -> int:
        response = Client().post(
            "/accounts/login/",
            {"username": username, "password": password},
            REMOTE_ADDR="172.16.0.1",  # the proxy
            HTTP_X_FORWARDED_FOR=forwarded,
        )
        return response.status_code

    for _ in range(LIMIT):
        # A client-written first hop does not change the address the proxy appended.
        login("bob", "wrong", "1.1.1.1, 10.0.0.5")
    assert login("bob", PASSWORD, "2.2.2.2, 10.0.0.5") == 429
    assert login("bob", PASSWORD, "10.0.0.6") == 302


# Transactional: the async client's view writes its failures on a connection of its own, which
# the rollback of an ordinary test would leave behind for the next run to trip over.
@pytest.mark.django_db(transaction=True)
async def test_the_lockout_holds_under_the_async_handler(ada: User) -> None:
    # daphne runs the middleware chain asynchronously, where axes takes another path.
    client = AsyncClient()
    wrong = {"username": "ada", "password": "wrong"}
    for _ in range(LIMIT):
        await client.post("/accounts/login/", wrong)
    response = await client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    await sync_to_async(connections.close_all)()  # the sync view's thread held a connection
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
