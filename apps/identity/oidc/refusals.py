"""Why an OpenID Connect sign-in was refused, in words a person can act on."""

from __future__ import annotations

from django.db import models


class OidcRefusal(models.TextChoices):
    UNREACHABLE = "unreachable", "The sign-in provider cannot be reached; try again later."
    WRONG_ISSUER = (
        "wrong_issuer",
        "The sign-in provider did not identify itself as the configured issuer.",
    )
    BAD_SIGNATURE = "bad_signature", "The sign-in provider's token carries an invalid signature."
    EXPIRED = "expired", "The sign-in provider's token has expired; sign in again."
    WRONG_AUDIENCE = "wrong_audience", "The sign-in provider's token was issued to another client."
    STATE = (
        "state",
        "This sign-in link was already used or has expired; start the sign-in again.",
    )
    WRONG_PROVIDER = (
        "wrong_provider",
        "This sign-in was started with another sign-in provider; start the sign-in again.",
    )
    NOT_CONFIGURED = "not_configured", "This sign-in provider is not configured."
    NONCE = "nonce", "The sign-in provider's token was not issued for this sign-in (nonce)."
    NO_GROUPS = (
        "no_groups",
        "The sign-in provider sent no groups for this account; ask your administrator.",
    )
    NO_USERNAME = "no_username", "The sign-in provider sent no user name for this account."
    LOCAL_ACCOUNT = (
        "local_account",
        "A local account already has this user name; ask your administrator to link it.",
    )
    INACTIVE = "inactive", "This account is deactivated."
    PROVIDER_ERROR = "provider_error", "The sign-in provider refused the sign-in."


class OidcRefused(Exception):
    """A sign-in refused for `reason`; `detail` says more for the audit (never for the page)."""

    def __init__(self, reason: OidcRefusal, detail: str = "") -> None:
        super().__init__(reason.label)
        self.reason = reason
        self.detail = detail or reason.value
