"""Database checks: a configured PostgreSQL must offer pgvector (say so clearly instead of
failing mid-migration), and stored vectors should all come from the configured embedder."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import connections
from django.db.models import Count

EXTENSION = "vector"


@register(Tags.database)
def pgvector_available(databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for alias in databases or []:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = %s", [EXTENSION])
            if cursor.fetchone() is None:
                errors.append(
                    Error(
                        f"The PostgreSQL server has no pgvector extension ('{EXTENSION}').",
                        hint="Install pgvector on that server, or unset DATABASE_URL to use "
                        "the embedded PostgreSQL that ships with it.",
                        id="corpus.E001",
                    )
                )
    return errors


@register(Tags.database)
def embedding_spaces(databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Chunks embedded by another model than the configured one are left out of search by
    meaning (their vectors are in another space); say which and how to bring them back."""
    from apps.corpus.models import Chunk
    from apps.corpus.search.embedders import configured_model_id

    if not databases:
        return []
    # `manage.py migrate` runs this check before it creates the tables on a new database.
    if Chunk._meta.db_table not in connections["default"].introspection.table_names():
        return []
    configured = configured_model_id()
    others = (
        Chunk.objects.exclude(embedding_model=configured)
        .values("embedding_model")
        .annotate(chunks=Count("pk"))
        .order_by("embedding_model")
    )
    found = ", ".join(f"{row['chunks']} by {row['embedding_model']}" for row in others)
    if not found:
        return []
    return [
        Warning(
            f"Some chunks were embedded by another model than the configured {configured} "
            f"({found}); search by meaning skips them, keyword search still finds them.",
            hint="Reprocess their documents (admin: Documents, action Reprocess) to embed them "
            "with the configured model, or configure the model that embedded them.",
            id="corpus.W002",
        )
    ]
