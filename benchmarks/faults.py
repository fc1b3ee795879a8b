"""Faults on two server processes and a task worker sharing a real PostgreSQL, and what
each leaves behind.

The database is a throwaway cluster of its own (tests/pg_cluster.py: the embedded server's
binaries in a temp folder, on a loopback port), so restarting it touches nothing else; the
servers are `tests.stream_server` (fake retrieval, a composer of fixed speed) and the worker
`tests.stream_worker` (the same fake embedder). Three faults, one after the other:

- `server_kill`: N answers asked on server a and followed from server b (half WebSocket, half
  SSE); a is killed with SIGKILL mid-answer.
- `worker_kill`: a long upload; the worker is killed with SIGKILL while the document is
  `processing`, and a new worker started at once (as `manage.py serve` or a supervisor does).
- `database_restart`: N answers in flight on both servers and requests every 100 ms to each,
  when PostgreSQL is restarted (`pg_ctl stop -m fast`, down for --down seconds, started again).

Printed for each: requests failed (and, for the restart, those after the database was back),
answers interrupted (and how many kept their partial text), documents reclaimed, the time to
recovery (the kill or the restart until the last follower ended, the document was ready, or
a request and an upload went through again) and whether every follower got a terminal event.

    python benchmarks/faults.py [--clients 10] [--down 2] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psycopg

REPO = Path(__file__).resolve().parent.parent
LONG_DOCUMENT = "# Policy\n\n" + "\n\n".join(
    f"Paragraph {n} about leave, travel, expenses and the rules that hold for them."
    for n in range(3000)
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=10, help="answers in flight per fault")
    parser.add_argument("--down", type=float, default=2.0, help="seconds the database is down")
    parser.add_argument("--lease", type=float, default=5.0, help="RAG_TURN_LEASE_S")
    parser.add_argument("--document-lease", type=float, default=5.0, help="RAG_DOCUMENT_LEASE_S")
    parser.add_argument("--sweep", type=float, default=2.0, help="RAG_DOCUMENT_SWEEP_S")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    figures = {"load_average_before": os.getloadavg()[0], **run(args)}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def run(args: argparse.Namespace) -> dict[str, Any]:
    import django

    django.setup()  # settings for the helpers (session cookie names); no database is used here
    from tests.pg_cluster import Cluster, platform_env, world_seed
    from tests.processes import Server, Worker

    cluster = Cluster().start()
    work = Path(tempfile.mkdtemp(prefix="faults-"))
    try:
        url = cluster.database_ready("faults")
        cookie = world_seed(url)["cookie"]
        env = platform_env(
            url,
            RAG_TURN_LEASE_S=args.lease,
            RAG_TURN_FOLLOW_CHECK_S=1.0,
            RAG_ASKS_PER_MINUTE=10_000,
            RAG_DOCUMENT_LEASE_S=args.document_lease,
            RAG_DOCUMENT_SWEEP_S=args.sweep,
            RAG_WORKER_HEARTBEAT_S=1.0,
            DATABASE_POOL_TIMEOUT_S=3.0,
            STREAM_PIECES=24,
            STREAM_PIECE_DELAY_S=0.25,
        )
        servers = [Server(env=env, log=work / f"{name}.log") for name in ("a", "b")]
        for server in servers:
            server.start()
        worker = Worker(env=env, log=work / "worker-1.log").start()
        world: dict[str, Any] = {"url": url, "cookie": cookie, "env": env, "work": work}
        try:
            figures = {"server_kill": asyncio.run(server_kill(args, servers, world))}
            servers[0].start()  # back for the next faults
            figures["worker_kill"] = worker_kill(args, servers[1], worker, world)
            worker = world["worker"]
            figures["database_restart"] = asyncio.run(
                database_restart(args, servers, cluster, worker, world)
            )
        finally:
            for server in servers:
                server.stop()
            world.get("worker", worker).stop()
    finally:
        cluster.remove()
    print(f"logs: {work}", file=sys.stderr)
    return figures


# --- the faults ------------------------------------------------------------------------------


async def server_kill(
    args: argparse.Namespace, servers: list[Any], world: dict[str, Any]
) -> dict[str, Any]:
    from benchmarks.stream_clients import ClientRun, client_run

    doomed, survivor = servers
    runs = [
        ClientRun("ws" if i % 2 else "sse", doomed, survivor, world["cookie"], drop_after=1)
        for i in range(args.clients)
    ]
    tasks = [asyncio.create_task(client_run(r, 120)) for r in runs]
    async with asyncio.timeout(60):
        while not all(r.following_again or t.done() for r, t in zip(runs, tasks, strict=True)):
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # a few more pieces, and their resumes have reached the survivor
    await asyncio.to_thread(doomed.kill)
    killed_at = time.monotonic()
    done = await asyncio.gather(*tasks)
    return _answers_figures(done, world, since=killed_at)


def worker_kill(
    args: argparse.Namespace, server: Any, worker: Any, world: dict[str, Any]
) -> dict[str, Any]:
    from tests.processes import Worker

    with _client(server, world) as client:
        failed = 0
        document = _upload(client, "long", LONG_DOCUMENT)
        deadline = time.monotonic() + 60
        while _document(world, document)[0] != "processing":
            if time.monotonic() > deadline:
                raise RuntimeError("the worker never started the document")
            time.sleep(0.02)
        first_attempt = _document(world, document)[1]
        worker.kill()
        killed_at = time.monotonic()
        world["worker"] = Worker(env=world["env"], log=world["work"] / "worker-2.log").start()
        replacement = world["worker"].process.pid
        reclaimed_at = up_at = None
        while (state := _document(world, document))[0] not in {"ready", "failed"}:
            if up_at is None and _heartbeat_seen(world, replacement):
                up_at = time.monotonic()  # the new worker runs its periodic jobs from now on
            if reclaimed_at is None and (state[0] != "processing" or state[1] > first_attempt):
                # The sweep gave it back to the queue, or a worker has already taken it again
                # (requeued between two looks): an upper bound on the reclaim either way.
                reclaimed_at = time.monotonic()
            if time.monotonic() - killed_at > 120:
                break
            failed += _failed(_get(client, f"/api/documents/{document}/"))
            time.sleep(0.1)
    status, attempts = state
    return {
        "requests_failed": failed,
        "documents_reclaimed": int(status == "ready" and attempts >= 2),
        "document_status": status,
        "document_attempts": attempts,
        # Requeued by the sweep or taken again (None: never), then processed again to the end.
        "reclaimed_s": round(reclaimed_at - killed_at, 2) if reclaimed_at else None,
        "recovery_s": round(time.monotonic() - killed_at, 2),
        "reclaim_bound_s": args.document_lease + args.sweep,  # the lease, then one sweep
        # With no other worker, the sweep runs only once the replacement is up: the documented
        # bound (lease + one sweep of a live worker) counts from the later of the two.
        "replacement_up_s": round(up_at - killed_at, 2) if up_at else None,
        "reclaim_bound_with_replacement_s": round(
            max(args.document_lease, up_at - killed_at) + args.sweep, 2
        )
        if up_at
        else None,
    }


def _heartbeat_seen(world: dict[str, Any], pid: int) -> bool:
    with psycopg.connect(world["url"]) as conn:
        row = conn.execute(
            "SELECT 1 FROM ragplatform_workerheartbeat WHERE pid = %s", [pid]
        ).fetchone()
    return row is not None


async def database_restart(
    args: argparse.Namespace,
    servers: list[Any],
    cluster: Any,
    worker: Any,
    world: dict[str, Any],
) -> dict[str, Any]:
    from benchmarks.stream_clients import ClientRun

    runs = [
        ClientRun("ws" if i % 2 else "sse", servers[i % 2], None, world["cookie"])
        for i in range(args.clients)
    ]
    tasks = [asyncio.create_task(_asked_and_followed(r, servers)) for r in runs]
    stop = asyncio.Event()
    polled: list[tuple[float, int]] = []
    pollers = [asyncio.create_task(_poll(s, world, polled, stop)) for s in servers]
    async with asyncio.timeout(60):  # every answer has started: the restart is under them
        while not all(r.first_at is not None or t.done() for r, t in zip(runs, tasks, strict=True)):
            await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    restarted_at = time.monotonic()
    back_at = await asyncio.to_thread(cluster.restart, down_s=args.down)
    upload_s = await asyncio.to_thread(_upload_processed, servers[1], world)
    done = await asyncio.gather(*tasks)
    await asyncio.sleep(2)  # more requests once it is back
    stop.set()
    await asyncio.gather(*pollers)
    after = [status for at, status in polled if at >= back_at]
    figures = _answers_figures(done, world, since=restarted_at)
    return {
        **figures,
        "requests": len(polled),
        "requests_failed": sum(_failed(status) for _, status in polled),
        "requests_failed_after_back": sum(_failed(status) for status in after),
        "first_request_after_back": after[0] if after else None,
        "worker_alive": worker.alive(),
        "upload_ready_after_back_s": upload_s,
        "down_s": round(back_at - restarted_at, 2),
    }


def _upload_processed(server: Any, world: dict[str, Any]) -> float | None:
    """Upload at once, and the seconds until the worker has processed it (None: not in 120 s)."""
    started = time.monotonic()
    with _client(server, world) as client:
        document = _upload(client, "after-restart", "# After\n\nUploaded once it was back.\n")
    while _document(world, document)[0] != "ready":
        if time.monotonic() - started > 120:
            return None
        time.sleep(0.1)
    return round(time.monotonic() - started, 2)


async def _asked_and_followed(run: Any, servers: list[Any]) -> Any:
    """Ask, and follow to the end as the chat page and EventSource do: reconnect and resume
    after a close (4503 while the database is unreachable) or a cut stream."""
    from benchmarks.stream_clients import client_resume, client_run

    await client_run(run, 120)
    if run.terminal is None and run.turn is not None:
        run.following_again = True
        await client_resume(run, servers, 120)
    return run


# --- what the faults left --------------------------------------------------------------------


def _answers_figures(done: list[Any], world: dict[str, Any], *, since: float) -> dict[str, Any]:
    ends = [r.ended_at for r in done if r.ended_at is not None]
    turns = _turns(world, [r.turn for r in done if r.turn])
    interrupted = [t for t in turns.values() if t[1] == "interrupted"]
    return {
        "answers": len(done),
        "asks_refused": sum(r.turn is None for r in done),  # no turn: nothing to follow
        "followers_resumed": sum(r.following_again for r in done),
        "client_errors": sorted({r.error.split(":")[0] for r in done if r.error}),
        "terminal_events": sum(r.terminal is not None for r in done),
        "every_follower_ended": all(r.terminal is not None for r in done if r.turn),
        "endings": _count(f"{t[0]} {t[1]}".strip() for t in turns.values()),
        "answers_interrupted": len(interrupted),
        "interrupted_with_partial_text": sum(bool(t[2]) and t[3] for t in interrupted),
        "recovery_s": round(max(ends) - since, 2) if ends else None,
        "slowest": _slowest(done, since=since),
    }


def _slowest(done: list[Any], *, since: float) -> dict[str, Any] | None:
    """The follower that ended last: which transport, turn and error kept it."""
    ended = [r for r in done if r.ended_at is not None]
    if not ended:
        return None
    last = max(ended, key=lambda r: r.ended_at)
    ended_s = round(last.ended_at - since, 2)
    return {"transport": last.transport, "turn": last.turn, "error": last.error, "ended_s": ended_s}


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def _turns(world: dict[str, Any], ids: list[int]) -> dict[int, tuple[str, str, str, bool]]:
    with psycopg.connect(world["url"]) as conn:
        rows = conn.execute(
            "SELECT id, status, error_code, answer, partial FROM answers_turn WHERE id = ANY(%s)",
            [ids],
        ).fetchall()
    return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}


def _document(world: dict[str, Any], document: int) -> tuple[str, int]:
    with psycopg.connect(world["url"]) as conn:
        row = conn.execute(
            "SELECT status, attempts FROM corpus_document WHERE id = %s", [document]
        ).fetchone()
    return (str(row[0]), int(row[1])) if row else ("missing", 0)


# --- requests --------------------------------------------------------------------------------


def _headers(world: dict[str, Any]) -> dict[str, str]:
    from tests.processes import CSRF_TOKEN

    return {"Cookie": f"{world['cookie']}; csrftoken={CSRF_TOKEN}", "X-CSRFToken": CSRF_TOKEN}


def _client(server: Any, world: dict[str, Any]) -> httpx.Client:
    return httpx.Client(base_url=server.http, headers=_headers(world), timeout=30)


def _upload(client: httpx.Client, name: str, text: str) -> int:
    files = {"file": (f"{name}.md", text.encode())}
    response = client.post("/api/documents/", files=files, data={"collection": "Handbook"})
    if response.status_code != 202:
        raise RuntimeError(f"upload refused: {response.status_code} {response.text[:200]}")
    return int(response.json()["id"])


def _get(client: httpx.Client, path: str) -> int:
    try:
        return client.get(path).status_code
    except httpx.HTTPError:
        return 0  # no answer at all: counted as failed


def _failed(status: int) -> bool:
    return status == 0 or status >= 500


async def _poll(
    server: Any, world: dict[str, Any], into: list[tuple[float, int]], stop: asyncio.Event
) -> None:
    """GET /api/conversations/ every 100 ms: (when it was answered, its status; 0 for none)."""
    async with httpx.AsyncClient(base_url=server.http, headers=_headers(world), timeout=30) as c:
        while not stop.is_set():
            sent = time.monotonic()
            try:
                status = (await c.get("/api/conversations/")).status_code
            except httpx.HTTPError:
                status = 0
            into.append((sent, status))
            await asyncio.sleep(0.1)


if __name__ == "__main__":
    raise SystemExit(main())
