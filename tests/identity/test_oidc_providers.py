"""RAG_OIDC_PROVIDERS read into providers: the single provider kept first with its own paths,
listed ones with theirs and the RAG_OIDC_* defaults, and a bad list refused with what is wrong.
(The browser tests in tests/e2e/test_oidc_several_providers.py sign in through two.)"""

from __future__ import annotations

import json

import pytest
from django.conf import LazySettings
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from apps.identity.models import IdentityEvent
from apps.identity.oidc.providers import oidc_providers
from apps.identity.vocabulary import EventKind

NORTH = {"key": "north", "label": "North", "issuer": "https://n.example", "client_id": "rp"}


def test_oidc_single_and_listed_providers_keep_their_own_paths(settings: LazySettings) -> None:
    settings.RAG_OIDC_ISSUER = "https://single.example"
    settings.RAG_OIDC_PROVIDER_NAME = "Single"
    settings.RAG_OIDC_GROUPS_CLAIM = "groups"
    settings.RAG_OIDC_PROVIDERS = json.dumps(
        [NORTH, {**NORTH, "key": "south", "label": "S", "groups_claim": "roles"}]
    )
    single, north, south = oidc_providers()
    assert (single.label, single.callback_path) == ("Single", "/accounts/oidc/callback/")
    assert north.callback_path == "/accounts/oidc/north/callback/"
    assert north.sign_in_path == "/accounts/oidc/north/authenticate/"
    assert (north.groups_claim, south.groups_claim) == ("groups", "roles")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("[not json", "is not JSON"),
        ('{"key": "north"}', "not a JSON list"),
        (json.dumps([{"key": "north"}]), "lacks issuer, client_id"),
        (json.dumps([{**NORTH, "secret": "x"}]), "unknown fields: secret"),
        (json.dumps([{**NORTH, "key": "default"}]), "lower-case letters"),
        (json.dumps([{**NORTH, "key": "North!"}]), "lower-case letters"),
        (json.dumps([NORTH, NORTH]), "repeats a key"),
    ],
)
def test_oidc_bad_provider_list_is_refused_with_what_is_wrong(
    settings: LazySettings, value: str, words: str
) -> None:
    settings.RAG_OIDC_PROVIDERS = value
    with pytest.raises(ImproperlyConfigured, match=words):
        oidc_providers()


@pytest.mark.django_db
def test_oidc_unknown_provider_path_is_refused_clearly(settings: LazySettings) -> None:
    settings.RAG_OIDC_PROVIDERS = json.dumps([NORTH])
    for path in ("/accounts/oidc/west/authenticate/", "/accounts/oidc/west/callback/?state=x"):
        response = Client().get(path)
        assert response.status_code == 400
        assert b"This sign-in provider is not configured." in response.content
    assert IdentityEvent.objects.filter(kind=EventKind.SIGN_IN_FAILED).count() == 2
