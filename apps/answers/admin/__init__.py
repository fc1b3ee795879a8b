"""Answers in the Django admin: conversations and turns (read-only audit), their filters, the audit page and CSV, the router's labelled set."""

# Importing the admin modules registers their ModelAdmins (Django imports this package).
from apps.answers.admin import router, turns  # noqa: F401
