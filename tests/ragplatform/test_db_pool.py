"""The pool's check of a connection it hands out: no round trip for a connection the server
has said nothing to, the full check (and the connection discarded) for one it has ended."""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from ragplatform.postgres.base import pooled_connection_check

pytestmark = pytest.mark.django_db(transaction=True)


def _conninfo() -> dict[str, Any]:
    params = connection.get_connection_params()
    keep = {"dbname", "host", "port", "user", "password"}
    return {k: v for k, v in params.items() if k in keep and v}


@pytest.fixture
def pooled() -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(**_conninfo(), autocommit=True) as conn:
        yield conn


def _last_statement(pid: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        return str(cursor.fetchone()[0])


def test_a_connection_the_server_said_nothing_to_is_handed_out_without_a_round_trip(
    pooled: psycopg.Connection[Any],
) -> None:
    pooled.execute("SELECT 'the last statement'")

    pooled_connection_check(pooled)

    # psycopg's own check would have sent an empty statement: the backend's last would be ''.
    assert _last_statement(pooled.info.backend_pid) == "SELECT 'the last statement'"


def test_a_connection_whose_session_the_server_ended_is_refused(
    pooled: psycopg.Connection[Any],
) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pooled.info.backend_pid])
    poller = select.poll()
    poller.register(pooled.fileno(), select.POLLIN)
    deadline = time.monotonic() + 5
    while not poller.poll(50) and time.monotonic() < deadline:
        pass  # the backend says why and closes its socket as it exits

    with pytest.raises(psycopg.OperationalError):
        pooled_connection_check(pooled)


def test_a_closed_connection_is_refused(pooled: psycopg.Connection[Any]) -> None:
    pooled.close()
    with pytest.raises(psycopg.OperationalError):
        pooled_connection_check(pooled)


@pytest.mark.skipif(not settings.DATABASE_POOL, reason="DATABASE_POOL is off")
def test_django_borrows_through_the_cheap_check() -> None:
    assert connection.pool._check is pooled_connection_check  # type: ignore[attr-defined]


def test_the_pool_hands_out_no_connection_whose_session_the_server_ended() -> None:
    # A pool of its own, made as Django makes its pool: the process's pool is shared with
    # every earlier test, whose borrowed connections are not this test's to end.
    pool = connection._pool_new({"min_size": 2, "max_size": 2, "timeout": 10})  # type: ignore[attr-defined]
    pool.open(wait=True)
    try:
        with pool.connection() as first, pool.connection() as second:
            ended = {first.info.backend_pid, second.info.backend_pid}
        with connection.cursor() as cursor:  # a restart looks like this to the pool
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [list(ended)]
            )
        time.sleep(0.5)  # the backends say why and close their sockets as they exit

        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid not in ended
    finally:
        pool.close()
