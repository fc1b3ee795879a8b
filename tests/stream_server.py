"""The platform as daphne serves it, with fast fake providers and a composer of fixed speed:
what the multi-process tests and `benchmarks/stream_load.py` start, twice, on one database.

    daphne tests.stream_server:application

Environment (besides the platform's own settings, such as RAG_TURN_LEASE_S):
    STREAM_DATABASE        the database to use (the test database; default: the configured one)
    STREAM_PIECES          how many pieces each answer has (default 12)
    STREAM_PIECE_DELAY_S   the pause before each piece (default 0.2): the composer's fixed speed
    STREAM_QUERY_COUNT     a file to which the number of database queries this process ran so
                           far is written twice a second (for the benchmark's queries per event)
    STREAM_QUERY_KINDS     with STREAM_QUERY_COUNT, a file prefix: each process also writes the
                           count of its statements by their first 90 characters to PREFIX.<pid>
                           (which statements a question costs, for profiling by hand)
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")

from django.conf import settings

if os.environ.get("STREAM_DATABASE"):
    settings.DATABASES["default"]["NAME"] = os.environ["STREAM_DATABASE"]

from apps.answers.providers.registry import providers_override
from ragplatform.asgi import application as _platform
from tests.answers.fakes import ANSWER_PIECES, ScriptedComposer, providers_fake
from tests.conftest import CountingEmbedder


def fixed_speed_composer() -> ScriptedComposer:
    """The handbook's answer, piece after piece (repeated to STREAM_PIECES pieces), so the
    answer path keeps it (an unsupported text would be replaced by a refusal at the end)."""
    count = int(os.environ.get("STREAM_PIECES", "12"))
    return ScriptedComposer(
        pieces=[ANSWER_PIECES[i % len(ANSWER_PIECES)] for i in range(count)],
        delay_s=float(os.environ.get("STREAM_PIECE_DELAY_S", "0.2")),
    )


def _queries_counted(path: str) -> None:
    """Count every query any of this process's Django connections runs."""
    import threading
    import time
    from pathlib import Path
    from typing import Any

    from django.db.backends.signals import connection_created

    count = [0]
    kinds: dict[str, int] = {}
    log = os.environ.get("STREAM_QUERY_KINDS")

    def counter(execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
        count[0] += 1
        if log:
            head = " ".join(str(sql).split())[:90]
            kinds[head] = kinds.get(head, 0) + 1
        return execute(sql, params, many, context)

    def installed(sender: Any, connection: Any, **kwargs: Any) -> None:
        if counter not in connection.execute_wrappers:
            connection.execute_wrappers.append(counter)

    def write() -> None:
        while True:
            Path(path).write_text(str(count[0]))
            if log:
                Path(log + "." + str(os.getpid())).write_text(
                    "\n".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda x: -x[1]))
                )
            time.sleep(0.5)

    connection_created.connect(installed, weak=False)
    threading.Thread(target=write, daemon=True).start()


if os.environ.get("STREAM_QUERY_COUNT"):
    _queries_counted(os.environ["STREAM_QUERY_COUNT"])

# For the life of the process: every turn it answers uses these providers (the reference
# keeps the override from being closed when the context manager is collected).
_OVERRIDE = providers_override(providers_fake(CountingEmbedder(), composer=fixed_speed_composer()))
_OVERRIDE.__enter__()
application = _platform
