"""Two OpenID providers configured at once (RAG_OIDC_PROVIDERS), in a real browser against two
real `oidc-provider` instances with their own issuers, clients and groups claims: each signs in
through its own link and callback, the audit names it, and a sign-in started at one provider
is refused at the other's callback."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group, User
from playwright.sync_api import Page, expect

from apps.identity.models import ExternalIdentity, IdentityEvent
from apps.identity.oidc.discovery import discovery_forget
from apps.identity.vocabulary import EventKind, Source
from tests.factories import CollectionFactory
from tests.identity.servers import CLIENT_SECRET, OpenIdProvider, openid_provider

pytestmark = pytest.mark.django_db(transaction=True)
NORTH_ACCOUNTS: dict[str, dict[str, object]] = {
    "alice": {"preferred_username": "alice", "email": "alice@north.example", "groups": ["research"]}
}
# South names groups in another claim, as a second organisation's provider may.
SOUTH_ACCOUNTS: dict[str, dict[str, object]] = {
    "bruno": {"preferred_username": "bruno", "email": "bruno@south.example", "roles": ["finance"]}
}


@pytest.fixture(scope="session")
def north(daphne_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    with openid_provider(
        rp_url=daphne_url,
        accounts=NORTH_ACCOUNTS,
        folder=tmp_path_factory.mktemp("oidc-north"),
        client_id="ragplatform-north",
        callback_path="/accounts/oidc/north/callback/",
    ) as running:
        yield running


@pytest.fixture(scope="session")
def south(daphne_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    with openid_provider(
        rp_url=daphne_url,
        accounts=SOUTH_ACCOUNTS,
        folder=tmp_path_factory.mktemp("oidc-south"),
        client_id="ragplatform-south",
        callback_path="/accounts/oidc/south/callback/",
        host="localhost",
    ) as running:
        yield running


@pytest.fixture
def providers(
    settings: LazySettings, north: OpenIdProvider, south: OpenIdProvider
) -> Iterator[None]:
    settings.RAG_OIDC_ISSUER = ""  # only the listed providers
    settings.RAG_OIDC_PROVIDERS = json.dumps(
        [
            {
                "key": "north",
                "label": "North IdP",
                "issuer": north.issuer,
                "client_id": "ragplatform-north",
                "client_secret": CLIENT_SECRET,
                "scopes": "openid email profile groups",
            },
            {
                "key": "south",
                "label": "South IdP",
                "issuer": south.issuer,
                "client_id": "ragplatform-south",
                "client_secret": CLIENT_SECRET,
                "scopes": "openid email profile groups",
                "groups_claim": "roles",
            },
        ]
    )
    discovery_forget()
    yield
    discovery_forget()


def _start(page: Page, base: str, label: str) -> None:
    page.set_default_timeout(15_000)
    page.goto(f"{base}/accounts/login/")
    page.get_by_role("link", name=f"Sign in with {label}").click()


def _log_in_at_provider(page: Page, login: str) -> None:
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any password: the dev login checks none")
    page.get_by_role("button", name="Sign-in").click()


def test_oidc_each_of_two_providers_signs_in_with_its_own_client_and_groups_claim(
    page: Page, daphne_url: str, providers: None, south: OpenIdProvider
) -> None:
    research, finance = Group.objects.create(name="research"), Group.objects.create(name="finance")
    CollectionFactory.create(name="Ledgers", public=False).reader_groups.add(finance)
    _start(page, daphne_url, "North IdP")
    _log_in_at_provider(page, "alice")
    expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
    assert list(User.objects.get(username="alice").groups.all()) == [research]

    page.goto("about:blank")
    page.context.clear_cookies()
    _start(page, daphne_url, "South IdP")
    _log_in_at_provider(page, "bruno")
    expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
    bruno = User.objects.get(username="bruno")
    assert list(bruno.groups.all()) == [finance]  # from South's "roles" claim
    assert ExternalIdentity.objects.get(user=bruno).issuer == south.issuer
    page.goto(f"{daphne_url}/api/collections/")
    assert "Ledgers" in page.content()
    signed_in = IdentityEvent.objects.filter(kind=EventKind.SIGN_IN, source=Source.OIDC)
    assert sorted(signed_in.values_list("username", "provider")) == [
        ("alice", "North IdP"),
        ("bruno", "South IdP"),
    ]
    # Sign-out goes to the provider this session came from.
    page.goto(f"{daphne_url}/")
    page.locator("form.logout button").click()
    expect(page).to_have_url(re.compile(re.escape(f"{south.issuer}/session/end")))


def test_oidc_admin_and_chat_login_offer_every_provider(
    page: Page, daphne_url: str, providers: None
) -> None:
    for path in ("/accounts/login/", "/admin/login/"):
        page.goto(f"{daphne_url}{path}")
        for label in ("North IdP", "South IdP"):
            expect(page.get_by_role("link", name=f"Sign in with {label}")).to_be_visible()


def _north_answer(page: Page, *, login: str) -> str:
    """Logs in at North's form with the browser's own cookies, but stops at North's redirect
    back, which the browser would follow at once (spending the state at North's callback; a
    route never sees a redirect's next request): returns the callback address North gave."""
    page.locator("input[name=login]").wait_for()
    form = page.locator("form").first
    action = str(form.evaluate("f => f.action"))
    fields = dict(form.evaluate("f => Object.fromEntries(new FormData(f))"))
    fields.update(login=login, password="any password")
    address = action
    for _ in range(5):  # the form's answer, then the authorization endpoint's resume
        answer = (
            page.request.post(address, form=fields, max_redirects=0)
            if address == action
            else page.request.get(address, max_redirects=0)
        )
        address = urljoin(address, answer.headers["location"])
        if "/accounts/oidc/north/callback/" in address:
            return address
    raise AssertionError(f"North never redirected back; last at {address}")


@pytest.mark.parametrize("keep_iss", [True, False], ids=["with-iss", "without-iss"])
def test_oidc_state_from_one_provider_is_refused_at_the_other(
    page: Page, daphne_url: str, providers: None, keep_iss: bool
) -> None:
    _start(page, daphne_url, "North IdP")
    answer = _north_answer(page, login="alice")
    query = dict(parse_qsl(urlsplit(answer).query))
    if not keep_iss:
        query.pop("iss", None)  # the state's binding alone refuses it, not just RFC 9207's iss
    page.goto(f"{daphne_url}/accounts/oidc/south/callback/?{urlencode(query)}")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("started with another sign-in provider")
    assert not User.objects.filter(username="alice").exists()
    refused = IdentityEvent.objects.get(kind=EventKind.SIGN_IN_FAILED)
    assert refused.provider == "South IdP" and "north" in refused.detail
    # The state is spent: brought back to North's own callback it is refused too.
    page.goto(answer)
    expect(page.get_by_role("alert")).to_contain_text("already used or has expired")
