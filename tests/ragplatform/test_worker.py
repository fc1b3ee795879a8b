"""`manage.py worker`: the task loop of django-tasks-db, a heartbeat row per process, and the
periodic jobs of `ragplatform.periodic` run on their intervals."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta

import pytest
from django.conf import LazySettings
from django.core.management import CommandError, call_command
from django.db import OperationalError, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.corpus.ingestion.services import document_submit
from apps.corpus.models import DocumentStatus
from apps.corpus.tasks import document_process_task
from ragplatform.models import WorkerHeartbeat
from ragplatform.periodic import PeriodicJob, periodic_jobs
from ragplatform.worker_runtime import (
    FIRST_RETRY_S,
    TrackedWorker,
    WorkerState,
    background_start,
    background_stop,
    database_wait,
    periodic_due,
    task_loop_supervised,
)
from ragplatform.workers import (
    WorkerIdentity,
    worker_alive,
    worker_beat,
    worker_last_seen,
    workers_prune,
)
from tests.conftest import CountingEmbedder
from tests.factories import CollectionFactory


def _identity(worker_id: str = "w-1") -> WorkerIdentity:
    return WorkerIdentity(worker_id=worker_id, host="host-a", pid=4242, started_at=timezone.now())


def _job(name: str, every: float, calls: list[str]) -> PeriodicJob:
    return PeriodicJob(name=name, every_s=lambda: every, run=lambda: calls.append(name))


def test_jobs_are_due_on_their_own_intervals() -> None:
    fast, slow = _job("fast", 1.0, []), _job("slow", 30.0, [])

    due, nap = periodic_due((fast, slow), {}, now=100.0)
    assert [j.name for j in due] == ["fast", "slow"] and nap == 1.0

    due, nap = periodic_due((fast, slow), {"fast": 100.0, "slow": 100.0}, now=100.5)
    assert due == [] and nap == pytest.approx(0.5)

    due, _ = periodic_due((fast, slow), {"fast": 100.0, "slow": 100.0}, now=101.0)
    assert [j.name for j in due] == ["fast"]


def test_the_apps_register_their_sweeps() -> None:
    names = {job.name for job in periodic_jobs()}
    assert {"corpus.documents_reclaim", "corpus.kept_uploads_expire"} <= names


@pytest.mark.django_db
def test_heartbeats_tell_whether_a_worker_is_alive(settings: LazySettings) -> None:
    settings.RAG_WORKER_STALE_S = 60
    assert worker_last_seen() is None and not worker_alive(last_seen=None)

    worker_beat(identity=_identity(), current_task="document_process_task(3,)")
    worker_beat(identity=_identity(), current_task="")

    row = WorkerHeartbeat.objects.get()
    assert (row.host, row.pid, row.current_task) == ("host-a", 4242, "")
    assert worker_alive(last_seen=worker_last_seen())
    WorkerHeartbeat.objects.update(last_seen_at=timezone.now() - timedelta(minutes=2))
    assert not worker_alive(last_seen=worker_last_seen())
    WorkerHeartbeat.objects.update(last_seen_at=timezone.now() - timedelta(days=8))
    assert workers_prune() == 1


def _wait_for(condition: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.django_db(transaction=True)
def test_background_threads_beat_run_jobs_and_survive_a_failing_one(
    settings: LazySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RAG_WORKER_HEARTBEAT_S = 0.5
    calls: list[str] = []

    def broken() -> None:
        calls.append("broken")
        raise RuntimeError("a job that always fails")

    jobs = (_job("sweep", 0.2, calls), PeriodicJob("broken", lambda: 0.2, broken))
    monkeypatch.setattr("ragplatform.worker_runtime.periodic_jobs", lambda: jobs)
    state = WorkerState(_identity())

    threads = background_start(state)
    try:
        assert _wait_for(lambda: calls.count("sweep") >= 3 and calls.count("broken") >= 3)
        assert _wait_for(lambda: WorkerHeartbeat.objects.filter(worker_id="w-1").exists())
        state.task_set("document_process_task(7,)")
        assert _wait_for(
            lambda: WorkerHeartbeat.objects.filter(
                current_task__startswith="document_process"
            ).exists()
        )
    finally:
        background_stop(state, threads)
        connections.close_all()
    assert not any(t.is_alive() for t in threads)
    assert not WorkerHeartbeat.objects.exists()  # a clean stop forgets the worker


@pytest.mark.django_db(transaction=True)  # the loop closes connections between tasks
def test_the_task_loop_reports_the_task_it_runs(embedder: CountingEmbedder) -> None:
    document = document_submit(
        collection=CollectionFactory.create(), filename="a.md", data=b"# A\n\nSome text here.\n"
    ).document
    result = document_process_task.enqueue(document.pk)
    seen: list[str] = []

    class Recording(WorkerState):
        def task_set(self, description: str) -> None:
            seen.append(description)
            super().task_set(description)

    worker = TrackedWorker(
        state=Recording(_identity()),
        queue_names=["default"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="w-1",
        excluded_queue_names=[],
    )
    worker.run()

    # The document's task, then the sentence vectors its new chunks asked for, each reported
    # while it runs and cleared after it.
    assert seen[:2] == [f"document_process_task({document.pk},) [{result.id}]", ""]
    assert len(seen) == 4 and seen[2].startswith("sentence_vectors_task(") and seen[3] == ""
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY
    connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_the_command_runs_tasks_and_leaves_no_heartbeat_behind(
    embedder: CountingEmbedder,
) -> None:
    document = document_submit(
        collection=CollectionFactory.create(), filename="a.md", data=b"# A\n\nSome text here.\n"
    ).document
    document_process_task.enqueue(document.pk)

    call_command("worker", "--batch", "--no-startup-delay", verbosity=0)

    document.refresh_from_db()
    assert document.status == DocumentStatus.READY
    assert not WorkerHeartbeat.objects.exists()
    connections.close_all()


def test_the_command_does_not_reload_code() -> None:
    with pytest.raises(CommandError, match="does not reload"):
        call_command("worker", "--reload", verbosity=0)


@pytest.mark.django_db
def test_the_admin_lists_workers_read_only(admin_client: Client) -> None:
    worker_beat(identity=_identity(), current_task="document_process_task(3,)")

    page = admin_client.get(reverse("admin:ragplatform_workerheartbeat_changelist"))

    assert page.status_code == 200
    content = page.content.decode()
    assert "host-a" in content and "document_process_task(3,)" in content
    assert 'alt="True"' in content  # alive
    add = admin_client.get(reverse("admin:ragplatform_workerheartbeat_add"))
    assert add.status_code == 403


class _LosesTheDatabase:
    """A task loop whose first runs end as db_worker's does when the database goes away."""

    def __init__(self, losses: int) -> None:
        self.losses, self.runs = losses, 0

    def run(self) -> None:
        self.runs += 1
        if self.runs <= self.losses:
            raise OperationalError("server closed the connection unexpectedly")


# Outside a test transaction: inside one, closing the connection keeps it (Django marks the
# block for rollback instead), and the real `SELECT 1` of database_wait could never succeed.
@pytest.mark.django_db(transaction=True)
def test_the_task_loop_outlives_a_lost_database(caplog: pytest.LogCaptureFixture) -> None:
    loop, naps = _LosesTheDatabase(losses=2), list[float]()

    task_loop_supervised(loop, sleep=naps.append)

    assert loop.runs == 3  # entered again after each loss, until it ended by itself
    assert naps == [FIRST_RETRY_S, FIRST_RETRY_S]  # the database answered at the first try
    lost = [r for r in caplog.records if "lost the database" in r.getMessage()]
    assert len(lost) == 2 and all(r.levelname == "WARNING" for r in lost)


def test_waiting_for_the_database_backs_off_to_the_longest_wait(
    settings: LazySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RAG_WORKER_DB_RETRY_MAX_S = 3.0
    tries = iter([False, False, False, False, True])

    def ensure() -> None:
        if not next(tries):
            raise OperationalError("connection refused")

    monkeypatch.setattr(connections["default"], "ensure_connection", ensure)
    monkeypatch.setattr(connections["default"], "cursor", lambda: contextlib.nullcontext(_Cursor()))
    naps: list[float] = []

    database_wait(sleep=naps.append)

    assert naps == [FIRST_RETRY_S, 1.0, 2.0, 3.0, 3.0]


class _Cursor:
    def execute(self, sql: str) -> None:
        assert sql == "SELECT 1"
