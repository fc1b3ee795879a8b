"""What runs beside django-tasks-db's task loop in `manage.py worker`: the heartbeat and the
periodic jobs of `periodic.py`, each in its own thread so a slow job never delays a heartbeat
and a long task never delays either.

Each thread uses its own database connection and closes it after every round, as a request
would, so a restarted database or a dropped connection costs one round, not the thread. The
task loop itself (`task_loop_supervised`) outlives the database too: db_worker lets a lost
connection escape its loop, so the loop is entered again once the database answers, after a
back-off that doubles up to RAG_WORKER_DB_RETRY_MAX_S; the outage is logged once, and its end.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
)
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from ragplatform.periodic import PeriodicJob, periodic_jobs
from ragplatform.workers import WorkerIdentity, worker_beat, worker_forget

logger = logging.getLogger(__name__)

# The longest a periodic thread sleeps, so jobs registered or re-timed later are picked up.
LONGEST_NAP_S = 5.0


class WorkerState:
    """What the heartbeat reports; written by the task loop, read by the heartbeat thread."""

    def __init__(self, identity: WorkerIdentity) -> None:
        self.identity = identity
        self.current_task = ""
        self.stop = threading.Event()
        self.changed = threading.Event()  # wakes the heartbeat early when a task starts or ends

    def task_set(self, description: str) -> None:
        self.current_task = description
        self.changed.set()


class TrackedWorker(Worker):
    """django-tasks-db's loop, telling the heartbeat which task it is running."""

    def __init__(self, *, state: WorkerState, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.state = state

    def run_task(self, db_task_result: DBTaskResult) -> None:
        name = db_task_result.task_path.rsplit(".", 1)[-1]
        args = (db_task_result.args_kwargs or {}).get("args", [])
        self.state.task_set(f"{name}{tuple(args)!r} [{db_task_result.id}]")
        try:
            super().run_task(db_task_result)
        finally:
            self.state.task_set("")


FIRST_RETRY_S = 0.5
# What a lost or restarting database raises; any other error is a bug and ends the worker.
DATABASE_LOST = (OperationalError, InterfaceError)


class TaskLoop(Protocol):
    def run(self) -> None: ...


def task_loop_supervised(loop: TaskLoop, *, sleep: Callable[[float], None] = time.sleep) -> None:
    """Run the task loop until it ends by itself; a lost database pauses it instead."""
    while True:
        try:
            loop.run()
            return
        except DATABASE_LOST as exc:
            logger.warning("The task loop lost the database (%s); it retries with back-off", exc)
        database_wait(sleep=sleep)
        logger.warning("The database answers again; the task loop resumes")


def database_wait(*, sleep: Callable[[float], None] = time.sleep) -> None:
    """Return once this thread can reach the database, waiting FIRST_RETRY_S at first and
    twice as long after each failure, up to RAG_WORKER_DB_RETRY_MAX_S."""
    delay = FIRST_RETRY_S
    while True:
        connection.close()  # the broken one; the next query opens a new one
        sleep(delay)
        try:
            connection.ensure_connection()
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            return
        except DatabaseError:
            delay = min(delay * 2, settings.RAG_WORKER_DB_RETRY_MAX_S)


def _round(name: str, work: Callable[[], object]) -> None:
    """One unit of background work; a failure is logged and the thread goes on."""
    try:
        work()
    except Exception:
        logger.exception("Worker background step %r failed", name)
    finally:
        close_old_connections()


def heartbeat_loop(state: WorkerState) -> None:
    try:
        while not state.stop.is_set():
            state.changed.clear()
            _round(
                "heartbeat",
                lambda: worker_beat(identity=state.identity, current_task=state.current_task),
            )
            state.changed.wait(settings.RAG_WORKER_HEARTBEAT_S)
        _round("heartbeat", lambda: worker_forget(worker_id=state.identity.worker_id))
    finally:
        connection.close()


def periodic_due(
    jobs: tuple[PeriodicJob, ...], last_run: dict[str, float], now: float
) -> tuple[list[PeriodicJob], float]:
    """The jobs due at `now`, and how long until the next one is (at most LONGEST_NAP_S)."""
    due, nap = [], LONGEST_NAP_S
    for job in jobs:
        next_at = last_run.get(job.name, float("-inf")) + job.every_s()
        if next_at <= now:
            due.append(job)
            next_at = now + job.every_s()
        nap = min(nap, max(0.0, next_at - now))
    return due, nap


def periodic_loop(state: WorkerState) -> None:
    """Run every registered job on its interval until the worker stops."""
    last_run: dict[str, float] = {}
    try:
        while not state.stop.is_set():
            due, nap = periodic_due(periodic_jobs(), last_run, time.monotonic())
            for job in due:
                last_run[job.name] = time.monotonic()
                _round(job.name, job.run)
            state.stop.wait(nap)
    finally:
        connection.close()


def background_start(state: WorkerState) -> list[threading.Thread]:
    """Start the heartbeat and the periodic jobs; daemon threads, so a forced exit is not held up."""
    threads = [
        threading.Thread(target=heartbeat_loop, args=(state,), name="heartbeat", daemon=True),
        threading.Thread(target=periodic_loop, args=(state,), name="periodic", daemon=True),
    ]
    for thread in threads:
        thread.start()
    return threads


def background_stop(state: WorkerState, threads: list[threading.Thread]) -> None:
    state.stop.set()
    state.changed.set()
    for thread in threads:
        thread.join(timeout=10)
