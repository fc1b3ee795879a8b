"""An OpenID provider that is down refuses its own sign-in clearly and blocks no other."""

from __future__ import annotations

import pytest
from django.conf import LazySettings
from django.contrib.auth.models import User
from django.test import Client

from apps.identity.models import IdentityEvent
from apps.identity.oidc.discovery import discovery_forget
from apps.identity.vocabulary import EventKind, Source
from tests.identity.servers import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def oidc_down(settings: LazySettings) -> None:
    settings.RAG_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings.RAG_OIDC_CLIENT_ID = "ragplatform"
    settings.RAG_OIDC_PROVIDER_NAME = "Corporate IdP"
    settings.RAG_OIDC_TIMEOUT_S = 1.0
    discovery_forget()


def test_oidc_provider_down_refuses_its_sign_in_with_a_reason(oidc_down: None) -> None:
    response = Client().get("/accounts/oidc/authenticate/")
    assert response.status_code == 400
    assert b"The sign-in provider cannot be reached" in response.content
    failed = IdentityEvent.objects.get(kind=EventKind.SIGN_IN_FAILED)
    assert failed.source == Source.OIDC and "discovery" in failed.detail


def test_oidc_provider_down_leaves_password_sign_in_alone(oidc_down: None) -> None:
    User.objects.create_user("pat", password="a-local-password-3")
    page = Client().get("/accounts/login/")
    assert b"Sign in with Corporate IdP" in page.content
    response = Client().post(
        "/accounts/login/", {"username": "pat", "password": "a-local-password-3"}
    )
    assert response.status_code == 302


def test_oidc_callback_without_a_started_sign_in_is_refused(oidc_down: None) -> None:
    response = Client().get("/accounts/oidc/callback/?code=abc&state=forged")
    assert response.status_code == 400
    assert b"already used or has expired" in response.content
