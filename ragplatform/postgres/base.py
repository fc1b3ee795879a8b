"""Django's PostgreSQL backend with a cheaper check of pooled connections.

With CONN_HEALTH_CHECKS, Django gives psycopg's pool `ConnectionPool.check_connection`, which
sends an empty statement and waits for the answer: a round trip, and a transaction in
PostgreSQL, on every borrow. Answers borrow a connection for every database call
(`ragplatform.db_threads.db_call`), so that check was about one statement in three they sent.

A connection resting in the pool has nothing to read unless the server said something: when
PostgreSQL stops or ends a session (a restart, a failover, `pg_terminate_backend`, an idle
timeout) it sends its reason and closes the socket. So the check here asks the socket, and
only a socket with something waiting on it gets psycopg's full check, which discards the
connection if the server has gone. What no check sees in time is a server that vanished
without a word (a machine powered off, a network cut): then the first statement fails, as it
would a moment after a round trip that passed.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg.pq import ConnStatus
from psycopg_pool import ConnectionPool


def pooled_connection_check(conn: psycopg.Connection[Any]) -> None:
    """Raise if `conn` should not be handed out; a round trip only when the server spoke."""
    if conn.closed or conn.pgconn.status != ConnStatus.OK:
        raise psycopg.OperationalError("the pooled connection is closed")
    if _readable(conn.fileno()):
        ConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    # poll, not select: a busy server process has descriptors past select's limit of 1024.
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class DatabaseWrapper(base.DatabaseWrapper):
    # django-stubs does not know the pool Django 5.1 added (`pool`, `_connection_pools`,
    # `_configure_connection`): hence the ignores below.

    @property
    def pool(self) -> ConnectionPool[Any] | None:
        # Django makes the pool on first use, once per alias for the process; made here first
        # (with the check above), it is the one Django finds and uses from then on.
        options = self.settings_dict["OPTIONS"].get("pool")
        pools: dict[str, ConnectionPool[Any]] = self._connection_pools  # type: ignore[attr-defined]
        if options and self.alias != NO_DB_ALIAS and self.alias not in pools:
            pools.setdefault(self.alias, self._pool_new({} if options is True else options))
        pool: ConnectionPool[Any] | None = super().pool  # type: ignore[misc]
        return pool

    def _pool_new(self, options: dict[str, Any]) -> ConnectionPool[Any]:
        checked = self.settings_dict["CONN_HEALTH_CHECKS"]
        return ConnectionPool(
            kwargs={**self.get_connection_params(), "autocommit": True},
            open=False,  # opened by the first connection, as Django does
            configure=self._configure_connection,  # type: ignore[attr-defined]
            check=pooled_connection_check if checked else None,
            **options,
        )
