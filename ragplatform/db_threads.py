"""The process's database threads: bounded pools on which work that runs detached from any
request (a turn being answered, a follower's reads) makes its synchronous database calls.

Each call borrows a connection and gives it back when it returns (to the pool, or closed as
at the end of a request), so the threads hold none between calls and independent turns do not
queue behind one another on a single thread. A call is one unit: a transaction never spans
two calls. Searches (the heavy queries and the query embedding of retrieval) have threads of
their own, so a turn's quick writes, such as its classification event, never wait behind the
searches of every turn that arrived with it.

Async code reaches the database through `db_call` only, detached or not, so the choice of
thread is made here and nowhere else (tests/test_architecture.py keeps `sync_to_async` out of
the apps).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, connection

_P = ParamSpec("_P")
_R = TypeVar("_R")
Lane = Literal["answers", "search"]

_lock = threading.Lock()
_pools: dict[Lane, ThreadPoolExecutor] = {}
_detached: ContextVar[bool] = ContextVar("db_threads_detached", default=False)


def db_threads(lane: Lane = "answers") -> ThreadPoolExecutor:
    """The lane's pool (RAG_DB_THREADS or RAG_DB_SEARCH_THREADS threads), made on first use."""
    with _lock:
        if lane not in _pools:
            size = settings.RAG_DB_SEARCH_THREADS if lane == "search" else settings.RAG_DB_THREADS
            _pools[lane] = ThreadPoolExecutor(size, thread_name_prefix=f"db-{lane}")
        return _pools[lane]


def db_call(call: Callable[_P, _R], *, lane: Lane = "answers") -> Callable[_P, Awaitable[_R]]:
    """`call` made awaitable: the one way async code reaches the database.

    Inside `db_threads_detached()` (and the tasks it starts) it runs on the lane's database
    threads and gives its connection back after; elsewhere on the caller's own thread, as
    `sync_to_async` does: a request's thread, or the thread of a synchronous caller under
    `async_to_sync`, whose connection and transaction it shares."""
    if _detached.get():
        return _on_db_threads(call, lane=lane)
    return sync_to_async(call)


def _on_db_threads(call: Callable[_P, _R], *, lane: Lane) -> Callable[_P, Awaitable[_R]]:
    # Straight onto the lane's executor, not through `sync_to_async`: a detached call shares
    # no caller's thread or context-local state, and asgiref's bookkeeping on every call (a
    # wrapper object, every context variable copied back into the caller, thread-sensitivity
    # checks) was a tenth of an answering process's CPU under load. Shielded, as
    # `sync_to_async` is: a caller that is cancelled does not drop a call already handed over.
    async def awaited(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        bound = functools.partial(_connected, call, *args, **kwargs)
        run = functools.partial(contextvars.copy_context().run, bound)
        return await asyncio.shield(
            asyncio.get_running_loop().run_in_executor(db_threads(lane), run)
        )

    return awaited


def _connected(call: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """`call` on this thread, which holds no connection before or after it."""
    if connection.connection is not None:
        # Only a connection kept between calls (DATABASE_CONN_MAX_AGE) can have gone bad
        # meanwhile; a pooled one was given back after the last call and is checked by the
        # pool when it is borrowed again.
        close_old_connections()
    try:
        return call(*args, **kwargs)
    finally:
        close_old_connections()


@contextmanager
def db_threads_detached() -> Iterator[None]:
    """Within this block (and the tasks it starts), `db_call` uses the database threads: for
    work that belongs to no caller's thread (a launched turn, a socket, a follower)."""
    token = _detached.set(True)
    try:
        yield
    finally:
        _detached.reset(token)


def db_threads_in_use() -> bool:
    """Whether `db_call` here runs on the database threads (inside `db_threads_detached`)
    rather than on a caller's thread, whose connection and transaction it would share."""
    return _detached.get()
