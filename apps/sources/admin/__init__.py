"""Sources in the Django admin: add, edit, sync now, pause and resume; the sync history."""

# Importing the admin modules registers their ModelAdmins (Django imports this package).
from apps.sources.admin import sources  # noqa: F401
