"""A configured PostgreSQL must offer pgvector; say so clearly instead of failing mid-migration."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.db import connections

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
