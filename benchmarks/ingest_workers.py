"""Ingestion by real task workers, for `benchmarks/ingest.py --workers N ...`.

The corpus is the given folder copied until it holds at least `--min-chunks` chunks, each copy's
titles marked with its number so that no chunk's text repeats (a repeat would be served by the
embedding cache, not computed). Every file is submitted into a throwaway collection, then N
`manage.py worker` processes (RAG_EMBED_THREADS=1 each: one core per worker) are started and
waited for (their heartbeat rows), the documents are scheduled as an upload schedules them,
and the clock runs until none is pending or processing. Afterwards the task results say which
worker ran each document: every document must have been run exactly once, by one worker.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ingest import SourceFile

    from apps.corpus.models import Collection

REPO = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
START_TIMEOUT_S = 180.0
HEADING = re.compile(rb"^(#{1,6} .+)$", re.MULTILINE)


@dataclass(frozen=True)
class WorkersRun:
    workers: int
    documents: int
    chunks: int
    seconds: float
    cpu_seconds: float  # user + system of the worker processes, from start to stop
    per_worker: tuple[int, ...]  # documents each worker ran

    @property
    def rate(self) -> float:
        return self.chunks / self.seconds


def copies_write(files: Sequence[SourceFile], folder: Path, copies: int) -> None:
    """`copies` copies of every file into `folder`, every Markdown heading marked with its copy."""
    for n in range(1, copies + 1):
        for source in files:
            data = HEADING.sub(rb"\1 (copy " + str(n).encode() + rb")", source.data)
            (folder / f"copy{n:03d}-{source.name}").write_bytes(data)


def workers_pass(files: Sequence[SourceFile], workers: int, collection_name: str) -> WorkersRun:
    from apps.corpus.ingestion.services import collection_get_or_create, document_submit
    from apps.corpus.models import Collection, Document
    from apps.corpus.uploads.batches import document_schedule

    collection = collection_get_or_create(name=collection_name)
    documents = [
        document_submit(collection=collection, filename=f.name, data=f.data).document for f in files
    ]
    ids = [f"bench-ingest-{os.getpid()}-{n}" for n in range(workers)]
    cache = Path(tempfile.mkdtemp(prefix="bench-ingest-cache-"))  # empty: every vector computed
    processes = [_worker_start(worker_id, cache) for worker_id in ids]
    try:
        _workers_wait(ids, processes)
        cpu_before = sum(_cpu_seconds(p.pid) for p in processes)
        enqueued = _now()
        start = time.perf_counter()
        for document in documents:
            document_schedule(document=document, wait=False)
        _documents_wait(collection, processes)
        seconds = time.perf_counter() - start
        cpu = sum(_cpu_seconds(p.pid) for p in processes) - cpu_before
    finally:
        _workers_stop(processes)
        shutil.rmtree(cache, ignore_errors=True)
    stored = Document.objects.filter(collection=collection)
    failed = list(stored.exclude(status="ready").values_list("filename", flat=True))
    chunks = sum(stored.values_list("chunk_count", flat=True))
    per_worker = _runs_per_worker([d.pk for d in documents], ids, enqueued)
    Collection.objects.filter(pk=collection.pk).delete()
    if failed:
        raise RuntimeError(f"{len(failed)} documents failed, e.g. {failed[:3]}")
    return WorkersRun(workers, len(documents), chunks, seconds, cpu, per_worker)


def _now() -> object:
    from django.utils import timezone

    return timezone.now()


def _worker_start(worker_id: str, cache: Path) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "RAG_EMBED_THREADS": "1",
        "RAG_EMBEDDING_CACHE_DIR": str(cache),
        "PYTHONPATH": str(REPO),
    }
    command = [sys.executable, str(REPO / "manage.py"), "worker", "--worker-id", worker_id]
    command += ["--interval", "0.2", "--no-startup-delay"]
    log = (cache / f"{worker_id}.log").open("wb")  # the task loop logs every task at INFO
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)  # noqa: S603


def _workers_wait(ids: Sequence[str], processes: Sequence[subprocess.Popen[bytes]]) -> None:
    from ragplatform.models import WorkerHeartbeat

    deadline = time.monotonic() + START_TIMEOUT_S
    while WorkerHeartbeat.objects.filter(worker_id__in=ids).count() < len(ids):
        if any(p.poll() is not None for p in processes) or time.monotonic() > deadline:
            raise RuntimeError("a worker did not start (no heartbeat row)")
        time.sleep(0.2)


def _documents_wait(collection: Collection, processes: Sequence[subprocess.Popen[bytes]]) -> None:
    from apps.corpus.models import Document

    waiting = Document.objects.filter(collection=collection, status__in=("pending", "processing"))
    while waiting.exists():
        if any(p.poll() is not None for p in processes):
            raise RuntimeError("a worker stopped while documents waited")
        time.sleep(0.25)


def _cpu_seconds(pid: int) -> float:
    # Fields 14 and 15 of /proc/PID/stat (utime, stime), after the parenthesised name.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _workers_stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _runs_per_worker(
    document_ids: Sequence[int], ids: Sequence[str], since: object
) -> tuple[int, ...]:
    """Documents each worker ran; raises if any document ran twice, or by two workers."""
    from django_tasks_db.models import DBTaskResult

    results = DBTaskResult.objects.filter(
        task_path__endswith="document_process_task", enqueued_at__gte=since
    ).values_list("args_kwargs", "worker_ids", "status")
    wanted = set(document_ids)
    runs: Counter[int] = Counter()
    by_worker: Counter[str] = Counter()
    for args_kwargs, worker_ids, status in results:
        document_id = args_kwargs["args"][0]
        if document_id not in wanted:
            continue
        runs[document_id] += 1
        if len(worker_ids) != 1 or status != "SUCCESSFUL":
            raise RuntimeError(f"document {document_id}: workers {worker_ids}, status {status}")
        by_worker[worker_ids[0]] += 1
    twice = [d for d, n in runs.items() if n != 1]
    if twice or len(runs) != len(wanted):
        raise RuntimeError(f"documents run other than once: {twice or wanted - set(runs)}")
    return tuple(by_worker[worker_id] for worker_id in ids)
