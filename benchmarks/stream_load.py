"""Answers under load on two server processes sharing PostgreSQL, then one process killed.

Starts two daphne processes on 127.0.0.1 (`tests.stream_server`: fake retrieval and a
composer of fixed speed, so the figures are the streaming path's, not a model's) on a fresh
database, and drives N concurrent clients, half WebSocket and half SSE, alternating between
the processes; every tenth is dropped mid-answer and resumes on the other process. Then a
second, smaller wave asks on one process and follows from the other, and the first is killed
with SIGKILL mid-answer: every follower must get a terminal event. `first_event_ms_alone` is
one question with nothing else running: the pipeline's own time to its first event;
`accepted_ms_*` the time until the client knows its turn exists (the WebSocket's `accepted`,
the SSE response's headers), before its first event. `--ramp S` sends the N questions evenly
over S seconds instead of all at once: the same N answers in flight (when S is at most the
answer's length) arriving as a stream of users would, not in one instant.
`server_cpu_s` is the CPU both server processes used during the load (from /proc),
`database_cpu_s` that of the PostgreSQL backends serving them, `client_cpu_s` this process's,
`db_sessions_peak` / `db_sessions_after` the connections to the database during and after it
(from pg_stat_activity: bounded by the servers' pools, none left behind), and
`load_average_before` the machine's load average as the load starts (its other work).
`cpu_ms_per_question` is the servers' and the database's CPU over the load per question asked;
`transactions_per_event` counts every transaction the database committed or rolled back for
the benchmark's database during the load (pg_stat_database: statements in autocommit, the
pool's checks of a connection, the LISTEN connections' own) per stored event, beside
`queries_per_event`, which counts only the statements Django's cursors ran.

    python benchmarks/stream_load.py --clients 200 [--ramp SECONDS] [--json FILE]

`--server-root DIR` runs the servers from another checkout (with this `tests/stream_server.py`
copied in) on this checkout's database server, to measure an older version the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, LiteralString, TypeVar

REPO = Path(__file__).resolve().parent.parent
DATABASE = "ragplatform_stream_load"
T = TypeVar("T")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--pieces", type=int, default=24, help="pieces per answer")
    parser.add_argument("--delay", type=float, default=0.25, help="seconds before each piece")
    parser.add_argument("--lease", type=float, default=10.0, help="RAG_TURN_LEASE_S")
    parser.add_argument("--follow-check", type=float, default=5.0, help="RAG_TURN_FOLLOW_CHECK_S")
    parser.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        help="seconds over which the N questions are sent, evenly (0: all at once)",
    )
    parser.add_argument("--server-root", type=Path, default=REPO)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    database_fresh()
    figures = asyncio.run(run(args))
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def database_fresh(name: str = DATABASE) -> None:
    """A new database for the run (dropped first if a previous run left it), migrated."""
    import django
    import psycopg
    from django.conf import settings
    from psycopg import sql

    settings.DATABASES["default"]["NAME"] = name
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    params = connection.get_connection_params()
    keep = {"host", "port", "user", "password"}
    conninfo = {k: v for k, v in params.items() if k in keep and v}
    with psycopg.connect(**conninfo, dbname="postgres", autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    call_command("migrate", verbosity=0)


def users_with_cookies(count: int) -> list[str]:
    from django.contrib.auth import get_user_model

    from tests.answers.fakes import handbook_load
    from tests.conftest import CountingEmbedder
    from tests.processes import session_cookie

    handbook_load(CountingEmbedder())
    model = get_user_model()
    users = [model.objects.create_user(f"load{i}", password=None) for i in range(count)]
    return [session_cookie(user) for user in users]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from asgiref.sync import sync_to_async
    from django.conf import settings

    from benchmarks.stream_clients import ClientRun, client_run
    from tests.processes import Server, servers_env

    cookies = await sync_to_async(users_with_cookies)(args.clients + 1)
    work = Path(tempfile.mkdtemp(prefix="stream-load-"))
    env = servers_env(
        DATABASE,
        PYTHONPATH=str(args.server_root),
        # This checkout's data directory: its database server and the secret key that signed
        # the clients' sessions, even for servers started from another checkout.
        RAG_DATA_DIR=settings.DATA_DIR,
        RAG_TURN_LEASE_S=args.lease,
        RAG_TURN_FOLLOW_CHECK_S=args.follow_check,
        RAG_ASKS_PER_MINUTE=1000,
        STREAM_PIECES=args.pieces,
        STREAM_PIECE_DELAY_S=args.delay,
    )
    servers = [
        Server(
            env={**env, "STREAM_QUERY_COUNT": str(work / f"{name}.count")},
            log=work / f"{name}.log",
            root=args.server_root,
        )
        for name in ("a", "b")
    ]
    await asyncio.gather(*(asyncio.to_thread(s.start) for s in servers))
    try:
        timeout = args.pieces * args.delay + 60
        reference = await client_run(ClientRun("ws", servers[0], None, cookies[-1]), timeout)
        load = await _load(args.clients, servers, cookies, timeout, ramp_s=args.ramp)
        # A wave small enough that all of it follows from the survivor well before its end.
        killed = await _kill_wave(min(max(args.clients // 10, 5), 20), servers, cookies, timeout)
    finally:
        for server in servers:
            server.stop()
    return await sync_to_async(figures_compute)(args, reference, load, killed)


async def _load(
    clients: int, servers: list[Any], cookies: list[str], timeout: float, *, ramp_s: float
) -> dict[str, Any]:
    from benchmarks.stream_clients import ClientRun, client_run

    runs = []
    for i in range(clients):
        ask_on, other = servers[i % 2], servers[(i + 1) % 2]
        dropped = i % 10 == 9  # 10% dropped mid-answer, resumed on the other process
        runs.append(
            ClientRun("ws" if i % 4 < 2 else "sse", ask_on, other if dropped else None, cookies[i])
        )
    before, cpu_before, own_before = _queries(servers), _cpu_s(servers), time.process_time()
    database_before, transactions_before = _database_cpu(), await _transactions()
    load_before = os.getloadavg()[0]  # the machine's other work, before ours starts
    sessions: list[int] = []
    sampler = asyncio.create_task(_sessions_sample(sessions))
    started = time.monotonic()
    done = await asyncio.gather(
        *(_after(i * ramp_s / clients, client_run(r, timeout)) for i, r in enumerate(runs))
    )
    elapsed = time.monotonic() - started
    sampler.cancel()
    cpu = {
        "servers": _cpu_s(servers) - cpu_before,
        "clients": time.process_time() - own_before,
        "database": sum(
            cpu - database_before.get(pid, 0.0) for pid, cpu in _database_cpu().items()
        ),
    }
    await asyncio.sleep(1.2)  # the counters are written twice a second
    queries = _queries(servers) - before
    # An idle backend reports its counts to pg_stat_database within 10 s (PostgreSQL's
    # PGSTAT_IDLE_INTERVAL); the servers are idle now, so wait that out before reading.
    await asyncio.sleep(_STATS_FLUSH_S)
    return {
        "runs": done,
        "queries": queries,
        "transactions": await _transactions() - transactions_before,
        "elapsed_s": elapsed,
        "cpu_s": cpu,
        "sessions_peak": max(sessions, default=0),
        "sessions_after": await _sessions(),
        "load_before": load_before,
    }


async def _after(delay_s: float, run: Awaitable[T]) -> T:
    await asyncio.sleep(delay_s)
    return await run


async def _sessions_sample(into: list[int]) -> None:
    while True:
        into.append(await _sessions())
        await asyncio.sleep(0.25)


_STATS_FLUSH_S = 11.0


async def _transactions() -> int:
    """Transactions committed and rolled back so far in the benchmark's database."""
    return await _database_value(
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s"
    )


async def _sessions() -> int:
    """Connections to the benchmark's database (this process's own included): bounded by the
    servers' pools while they answer, and back to their idle pools after."""
    return await _database_value("SELECT count(*) FROM pg_stat_activity WHERE datname = %s")


async def _database_value(query: LiteralString) -> int:
    """One number about the benchmark's database, read from the `postgres` database (so the
    reading is not counted in the benchmark database's own statistics)."""
    import psycopg
    from asgiref.sync import sync_to_async
    from django.db import connection

    params = await sync_to_async(connection.get_connection_params)()
    keep = {"host", "port", "user", "password"}
    conninfo = {k: v for k, v in params.items() if k in keep and v}
    async with await psycopg.AsyncConnection.connect(**conninfo, dbname="postgres") as conn:
        cursor = await conn.execute(query, [DATABASE])
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


def _cpu_s(servers: list[Any]) -> float:
    """CPU seconds the server processes have used so far (user and system, from /proc)."""
    return sum(_process_cpu_s(server.process.pid) or 0.0 for server in servers)


def _process_cpu_s(pid: int) -> float | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # it has exited
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _database_cpu() -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving the benchmark's database (their
    command line names it); the servers' pools keep them for the whole load."""
    found: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"postgres:") and DATABASE.encode() in cmdline:
            cpu = _process_cpu_s(int(entry.name))
            if cpu is not None:
                found[int(entry.name)] = cpu
    return found


async def _kill_wave(
    clients: int, servers: list[Any], cookies: list[str], timeout: float
) -> dict[str, Any]:
    """Ask on the first process and follow from the second; kill the first mid-answer."""
    from benchmarks.stream_clients import ClientRun, client_run

    doomed, survivor = servers
    runs = [
        ClientRun("ws" if i % 2 else "sse", doomed, survivor, cookies[i], drop_after=1)
        for i in range(clients)
    ]
    tasks = [asyncio.create_task(client_run(r, timeout)) for r in runs]
    async with asyncio.timeout(timeout):
        while not all(
            r.following_again or task.done() for r, task in zip(runs, tasks, strict=True)
        ):
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # their resumes have reached the survivor
    await asyncio.to_thread(doomed.kill)
    killed_at = time.monotonic()
    done = await asyncio.gather(*tasks)
    return {"runs": done, "killed_at": killed_at}


def _queries(servers: list[Any]) -> int:
    total = 0
    for server in servers:
        path = Path(server.env["STREAM_QUERY_COUNT"])
        total += int(path.read_text() or 0) if path.exists() else 0
    return total


def figures_compute(
    args: argparse.Namespace, reference: Any, load: dict[str, Any], killed: dict[str, Any]
) -> dict[str, Any]:
    from apps.answers.turn.selectors import turn_events_since

    runs = load["runs"]
    lost = duplicated = 0
    events = 0
    for r in [*runs, *killed["runs"]]:
        stored = {e["seq"] for e in turn_events_since(turn_id=r.turn)} if r.turn else set()
        got = [e["seq"] for e in r.received]
        lost += len(stored - set(got))
        duplicated += len(got) - len(set(got))
    for r in runs:
        events += len(turn_events_since(turn_id=r.turn)) if r.turn else 0
    firsts = sorted((r.first_at - r.sent_at) * 1000 for r in runs if r.first_at is not None)
    accepted = sorted((r.accepted_at - r.sent_at) * 1000 for r in runs if r.accepted_at)
    gaps = sorted(g * 1000 for r in runs for g in r.gaps)
    finished = [r for r in runs if r.terminal and r.terminal["type"] == "finished"]
    ends = [r.ended_at - killed["killed_at"] for r in killed["runs"] if r.ended_at]
    interrupted = [
        r for r in killed["runs"] if r.terminal and r.terminal["data"].get("code") == "interrupted"
    ]
    return {
        "clients": args.clients,
        "pieces": args.pieces,
        "piece_delay_s": args.delay,
        "ramp_s": args.ramp,
        "lease_s": args.lease,
        "turns_finished": len(finished),
        "events_lost": lost,
        "events_duplicated": duplicated,
        "texts_identical": sum(1 for r in finished if r.text == reference.text and reference.text),
        "first_event_ms_alone": round((reference.first_at - reference.sent_at) * 1000, 1),
        "accepted_ms_p50": _pct(accepted, 50),
        "accepted_ms_p95": _pct(accepted, 95),
        "first_event_ms_p50": _pct(firsts, 50),
        "first_event_ms_p95": _pct(firsts, 95),
        "gap_ms_p95": _pct(gaps, 95),
        "load_elapsed_s": round(load["elapsed_s"], 2),
        "queries_per_event": round(load["queries"] / events, 3) if events else None,
        "transactions_per_event": round(load["transactions"] / events, 3) if events else None,
        "events_per_turn": round(events / len(runs), 1),
        "cpu_ms_per_question": round(
            (load["cpu_s"]["servers"] + load["cpu_s"]["database"]) * 1000 / len(runs), 1
        ),
        "server_cpu_s": round(load["cpu_s"]["servers"], 2),
        "server_cpu_ms_per_turn": round(load["cpu_s"]["servers"] * 1000 / len(runs), 1),
        "client_cpu_s": round(load["cpu_s"]["clients"], 2),
        "database_cpu_s": round(load["cpu_s"]["database"], 2),
        "db_sessions_peak": load["sessions_peak"],
        "db_sessions_after": load["sessions_after"],
        "load_average_before": round(load["load_before"], 2),
        "kill_followers": len(killed["runs"]),
        "kill_followers_terminated": len(ends),
        "kill_followers_interrupted": len(interrupted),
        "kill_terminal_s": round(max(ends), 2) if len(ends) == len(killed["runs"]) else None,
        "client_errors": sorted({r.error for r in [*runs, *killed["runs"]] if r.error})[:5],
    }


def _pct(values: list[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1)


if __name__ == "__main__":
    raise SystemExit(main())
