"""The corpus in the Django admin: collections, documents (upload page, live progress), chunks."""

# Importing the admin modules registers their ModelAdmins (Django imports this package).
from apps.corpus.admin import documents  # noqa: F401
