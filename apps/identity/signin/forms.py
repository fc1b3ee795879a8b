"""The login forms of the chat and the admin, which say when the directory is down.

django-auth-ldap reports an unreachable directory through its `ldap_error` signal and then
refuses like a wrong password; `directory_errors_note` marks the request, and the form shows
that reason instead of "wrong password". A local account still signs in meanwhile.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

REFUSAL_ATTRIBUTE = "identity_refusal"
DIRECTORY_DOWN = "The directory cannot be reached right now; try again later."


def request_refusal_note(request: Any, text: str) -> None:
    if request is not None:
        setattr(request, REFUSAL_ATTRIBUTE, text)


class _SaysWhy(forms.Form):
    request: Any
    identity_refusal = ""

    def get_invalid_login_error(self) -> ValidationError:
        if refusal := getattr(self.request, REFUSAL_ATTRIBUTE, ""):
            self.identity_refusal = refusal
            return ValidationError(refusal, code="directory_unreachable")
        return super().get_invalid_login_error()  # type: ignore[misc]


class SignInForm(_SaysWhy, AuthenticationForm):
    pass


class AdminSignInForm(_SaysWhy, AdminAuthenticationForm):
    pass
