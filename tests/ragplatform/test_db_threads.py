"""The database threads: detached work runs its calls off the shared thread, concurrently,
on a bounded set of pooled connections that every call gives back."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection

from ragplatform.db_threads import db_call, db_threads_detached

pytestmark = pytest.mark.django_db(transaction=True)
pooled = pytest.mark.skipif(not settings.DATABASE_POOL, reason="DATABASE_POOL is off")


def _backend() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid() FROM pg_sleep(0.02)")
        return int(cursor.fetchone()[0])


def _borrowed() -> int:
    stats = connection.pool.get_stats()  # type: ignore[attr-defined]  # PostgreSQL's wrapper
    return int(stats.get("pool_size", 0) - stats.get("pool_available", 0))


@pooled
async def test_calls_give_their_connection_back_to_the_pool() -> None:
    with db_threads_detached():
        await db_call(_backend)()  # the pool is open
        before = _borrowed()
        await asyncio.gather(*(db_call(_backend)() for _ in range(8)))
    assert _borrowed() == before


async def test_independent_calls_run_at_once() -> None:
    # With one thread for everything, the first call would wait for a second that never runs.
    both = threading.Barrier(2, timeout=5)
    with db_threads_detached():
        await asyncio.gather(db_call(both.wait)(), db_call(both.wait)())


@pooled
async def test_many_calls_share_a_few_pooled_connections() -> None:
    max_size = int(connection.pool.max_size)  # type: ignore[attr-defined]
    with db_threads_detached():
        backends = await asyncio.gather(*(db_call(_backend)() for _ in range(40)))
    # Without the pool each call would open (and close) a connection of its own.
    assert len(set(backends)) <= max_size < 40


async def test_connections_are_bounded_while_calls_queue() -> None:
    def sessions() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            )
            return int(cursor.fetchone()[0])

    with db_threads_detached():
        before = await db_call(sessions)()
        counts = await asyncio.gather(*(db_call(sessions)() for _ in range(30)))
    assert max(counts) <= before + settings.RAG_DB_THREADS


def test_a_call_keeps_to_its_callers_thread_unless_detached() -> None:
    here = threading.current_thread()

    async def where() -> tuple[threading.Thread, threading.Thread]:
        attached = await db_call(threading.current_thread)()
        with db_threads_detached():
            detached = await db_call(threading.current_thread)()
        return attached, detached

    attached, detached = async_to_sync(where)()
    assert attached is here  # a synchronous caller's thread, with its transaction
    assert detached is not here and detached.name.startswith("db")


def test_searches_have_threads_of_their_own() -> None:
    async def names() -> tuple[str, str]:
        with db_threads_detached():
            answers = await db_call(threading.current_thread)()
            search = await db_call(threading.current_thread, lane="search")()
        return answers.name, search.name

    answers, search = async_to_sync(names)()
    assert answers.startswith("db-answers") and search.startswith("db-search")


async def test_a_cancelled_caller_does_not_drop_a_call_still_waiting_for_a_thread() -> None:
    # Every thread of the lane busy: the call waits in the queue when its caller is cancelled.
    release, ran = threading.Event(), threading.Event()
    with db_threads_detached():
        busy = [db_call(release.wait)(5) for _ in range(settings.RAG_DB_THREADS)]
        blockers = asyncio.gather(*busy)
        waiting = asyncio.ensure_future(db_call(ran.set)())
        await asyncio.sleep(0.05)
        waiting.cancel()
        await asyncio.sleep(0.05)  # the cancel has reached the queued call, if it can
        release.set()
        await blockers
        await asyncio.to_thread(ran.wait, 5)
    assert ran.is_set()  # a write handed to the threads is made, whoever stopped waiting


_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="")


async def test_a_detached_call_sees_its_callers_context_and_changes_none_of_it() -> None:
    def read_and_set() -> str:
        value = _seen.get()
        _seen.set("set in the call")
        return value

    _seen.set("the caller's")
    with db_threads_detached():
        assert await db_call(read_and_set)() == "the caller's"
    assert _seen.get() == "the caller's"


async def test_a_detached_call_holds_no_connection_after_it_even_when_it_fails() -> None:
    def held() -> bool:
        return connection.connection is not None

    def broken() -> None:
        _backend()
        raise RuntimeError("broke")

    with db_threads_detached():
        with pytest.raises(RuntimeError, match="broke"):
            await db_call(broken)()
        # Whichever thread the failed call used, it kept no connection.
        assert not any(
            await asyncio.gather(*(db_call(held)() for _ in range(settings.RAG_DB_THREADS)))
        )
