"""The identity admin: the audit trail (read-only, for auditors), group mappings, who reads
what and why, and the login page's form, which says when the directory is down."""

from __future__ import annotations

from django.contrib import admin

from apps.identity.admin import access, audit, mappings  # noqa: F401  (registers the admins)
from apps.identity.signin.forms import AdminSignInForm

admin.site.login_form = AdminSignInForm
