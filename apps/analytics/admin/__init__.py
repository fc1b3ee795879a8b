"""Analytics in the Django admin: categories, labelled queries, and the dashboard page."""

# Importing the admin modules registers their ModelAdmins (Django imports this package).
from apps.analytics.admin import categories  # noqa: F401
