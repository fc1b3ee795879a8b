"""OpenID Connect sign-in in a real browser against a real provider (the `oidc-provider` npm
package, run with Node by the tests): the chat and admin login pages, groups applied, a
private collection opened, RP-initiated logout, and each refusal with its reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import Group, User
from playwright.sync_api import Page, expect

from apps.identity.models import ExternalIdentity, IdentityEvent
from apps.identity.oidc.discovery import discovery_forget
from apps.identity.vocabulary import EventKind, Source
from tests.factories import CollectionFactory
from tests.identity.servers import CLIENT_ID, CLIENT_SECRET, OpenIdProvider, openid_provider

pytestmark = pytest.mark.django_db(transaction=True)
PROVIDER_NAME = "Test IdP"
ACCOUNTS: dict[str, dict[str, object]] = {
    "alice": {
        "preferred_username": "alice",
        "given_name": "Alice",
        "family_name": "Archer",
        "email": "alice@example.org",
        "groups": ["research", "unknown-elsewhere"],
    },
    "carol": {"preferred_username": "carol", "email": "carol@example.org"},  # no groups claim
}


@pytest.fixture(scope="session")
def provider(daphne_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    folder: Path = tmp_path_factory.mktemp("oidc-provider")
    with openid_provider(rp_url=daphne_url, accounts=ACCOUNTS, folder=folder) as running:
        yield running


@pytest.fixture
def oidc(settings: LazySettings, provider: OpenIdProvider) -> Iterator[OpenIdProvider]:
    settings.RAG_OIDC_ISSUER = provider.issuer
    settings.RAG_OIDC_CLIENT_ID = CLIENT_ID
    settings.RAG_OIDC_CLIENT_SECRET = CLIENT_SECRET
    settings.RAG_OIDC_PROVIDER_NAME = PROVIDER_NAME
    settings.RAG_OIDC_SCOPES = "openid email profile groups"
    discovery_forget()
    provider.misbehave("normal")
    yield provider
    provider.misbehave("normal")
    discovery_forget()


def _sign_in_at_provider(page: Page, base: str, login: str) -> None:
    page.set_default_timeout(15_000)
    page.goto(f"{base}/accounts/login/")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any password: the dev login checks none")
    page.get_by_role("button", name="Sign-in").click()


def _refusal(page: Page) -> str:
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible()
    return alert.inner_text()


def test_oidc_sign_in_applies_groups_opens_a_private_collection_and_logs_out(
    page: Page, daphne_url: str, oidc: OpenIdProvider
) -> None:
    research = Group.objects.create(name="research")
    private = CollectionFactory.create(name="Research notes", public=False)
    private.reader_groups.add(research)
    _sign_in_at_provider(page, daphne_url, "alice")
    expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
    alice = User.objects.get(username="alice")
    assert (alice.first_name, alice.last_name, alice.email) == (
        "Alice",
        "Archer",
        "alice@example.org",
    )
    assert list(alice.groups.all()) == [research]
    assert ExternalIdentity.objects.get(user=alice).subject == "alice"
    page.goto(f"{daphne_url}/api/collections/")
    assert "Research notes" in page.content()
    signed_in = IdentityEvent.objects.get(kind=EventKind.SIGN_IN, username="alice")
    assert (signed_in.source, signed_in.provider) == (Source.OIDC, PROVIDER_NAME)
    page.goto(f"{daphne_url}/")
    page.locator("form.logout button").click()
    page.get_by_role("button", name="Yes, sign me out").click()
    expect(page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")).to_be_visible()
    page.goto(f"{daphne_url}/api/collections/")
    assert "Research notes" not in page.content()


def test_oidc_admin_login_offers_the_provider(
    page: Page, daphne_url: str, oidc: OpenIdProvider
) -> None:
    page.goto(f"{daphne_url}/admin/login/")
    expect(page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")).to_be_visible()


def test_oidc_wrong_issuer_is_refused(
    page: Page, daphne_url: str, oidc: OpenIdProvider, settings: LazySettings
) -> None:
    # The same provider under another name: its discovery document names 127.0.0.1.
    settings.RAG_OIDC_ISSUER = f"http://localhost:{oidc.port}"
    page.goto(f"{daphne_url}/accounts/login/")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
    assert "did not identify itself as the configured issuer" in _refusal(page)
    failed = IdentityEvent.objects.get(kind=EventKind.SIGN_IN_FAILED)
    assert failed.source == Source.OIDC and "discovery names issuer" in failed.detail


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("bad_signature", "invalid signature"),
        ("expired", "has expired"),
    ],
)
def test_oidc_tampered_or_expired_id_token_is_refused(
    page: Page, daphne_url: str, oidc: OpenIdProvider, settings: LazySettings, mode: str, words: str
) -> None:
    settings.RAG_OIDC_CLOCK_SKEW_S = 0
    oidc.misbehave(mode)
    _sign_in_at_provider(page, daphne_url, "alice")
    assert words in _refusal(page)
    assert not User.objects.filter(username="alice").exists()


def test_oidc_replayed_state_is_refused(page: Page, daphne_url: str, oidc: OpenIdProvider) -> None:
    callbacks: list[str] = []
    page.on("request", lambda r: callbacks.append(r.url) if "/oidc/callback/" in r.url else None)
    _sign_in_at_provider(page, daphne_url, "alice")
    expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
    page.goto(callbacks[0])
    assert "already used or has expired" in _refusal(page)


def test_oidc_replayed_nonce_is_refused(page: Page, daphne_url: str, oidc: OpenIdProvider) -> None:
    _sign_in_at_provider(page, daphne_url, "alice")
    expect(page.get_by_role("heading", name="New conversation")).to_be_visible()
    oidc.misbehave("replay_nonce")  # the next ID token carries this sign-in's nonce
    # Leave the chat page first: signed out under it, its script goes to the login page itself,
    # which would abort the test's own navigation there.
    page.goto("about:blank")
    page.context.clear_cookies()
    _sign_in_at_provider(page, daphne_url, "alice")
    assert "not issued for this sign-in" in _refusal(page)


def test_oidc_missing_groups_claim_is_refused(
    page: Page, daphne_url: str, oidc: OpenIdProvider
) -> None:
    _sign_in_at_provider(page, daphne_url, "carol")
    assert "sent no groups" in _refusal(page)
    assert not User.objects.filter(username="carol").exists()
