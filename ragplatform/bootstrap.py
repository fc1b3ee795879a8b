"""First-run setup shared by `manage.py serve`: schema, an admin account, the demo corpus."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from apps.corpus.ingestion.services import collection_get_or_create
from apps.corpus.uploads.batches import paths_ingest

DEMO_COLLECTION = "Platform guide"


def admin_ensure(*, username: str = "admin") -> str | None:
    """Create the first superuser with a generated password; return it (shown once) or None."""
    users = get_user_model()
    if users.objects.filter(is_superuser=True).exists():
        return None
    password = secrets.token_urlsafe(12)
    users.objects.create_superuser(username=username, email="", password=password)
    return password


def platform_bootstrap(*, say: Callable[[str], None]) -> None:
    call_command("migrate", interactive=False, verbosity=0)
    if password := admin_ensure():
        say(f"Created the admin account: user 'admin', password '{password}' (shown only once).")
    # Public, so a user created after first start can ask about the guide straight away.
    collection = collection_get_or_create(
        name=DEMO_COLLECTION,
        description="The platform's own user guide (demo corpus).",
        public=True,
    )
    outcomes = paths_ingest(
        paths=[str(settings.RAG_DEMO_DOCS_DIR)], collection=collection, wait=True
    )
    fresh = sum(1 for o in outcomes if o.action == "processed")
    say(f"Demo corpus: {len(outcomes)} documents ({fresh} ingested now, the rest unchanged).")
