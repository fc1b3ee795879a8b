"""The task worker beside `tests.stream_server`'s processes, with the same fake providers (its
documents get the stream server's embeddings): what the database-restart test and
`benchmarks/faults.py` start.

    python -m tests.stream_worker      (DATABASE_URL, RAG_DOCUMENT_LEASE_S ... as for any worker;
                                        STREAM_DATABASE as for tests.stream_server)
"""

from __future__ import annotations

import os


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django
    from django.conf import settings

    if os.environ.get("STREAM_DATABASE"):  # as tests.stream_server reads it
        settings.DATABASES["default"]["NAME"] = os.environ["STREAM_DATABASE"]
    django.setup()
    from django.core.management import call_command

    from apps.answers.providers.registry import providers_override
    from tests.answers.fakes import providers_fake
    from tests.conftest import CountingEmbedder

    with providers_override(providers_fake(CountingEmbedder())):
        call_command("worker", "--no-startup-delay", "--interval", "0.2")


if __name__ == "__main__":
    main()
