"""`manage.py mcp_serve` on the test database with the tests' fake providers and embedder,
as an MCP client starts it: `python -m tests.reach.mcp_stdio --user NAME`.

Environment: STREAM_DATABASE, the database to use (the test database).
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")

import django
from django.conf import settings

if os.environ.get("STREAM_DATABASE"):
    settings.DATABASES["default"]["NAME"] = os.environ["STREAM_DATABASE"]
django.setup()

# After django.setup(): these import models.
from django.core.management import call_command  # noqa: E402

from apps.answers.providers.registry import providers_override  # noqa: E402
from apps.corpus.search.embedders import embedder_override  # noqa: E402
from tests.answers.fakes import ScriptedComposer, providers_fake  # noqa: E402
from tests.conftest import CountingEmbedder  # noqa: E402

if __name__ == "__main__":
    embedder = CountingEmbedder()
    with (
        embedder_override(embedder),
        providers_override(providers_fake(embedder, composer=ScriptedComposer())),
    ):
        call_command("mcp_serve", *sys.argv[1:])
