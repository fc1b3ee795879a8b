"""The documented deployment behind nginx: measured, and checked against the guide.

Starts what docs/guide/15-deployment.md describes, on one machine (tests/deployment.py): nginx
(Debian's package) with the guide's nginx block, only its placeholders replaced (ports, the
site's name, the certificate, the static folder; tests/nginx.py), checked with `nginx -t`, in
front of two daphne processes and two task workers on one fresh database, RAG_ENV=production
with the proxy settings the guide names. The answers are long ones of fixed speed
(`tests.stream_server`: fake retrieval, a composer of --pieces pieces --delay seconds apart),
so the figures are the proxy's and the streaming path's, not a model's.

Then, in alternating rounds, --questions questions directly on the daphne processes and the
same number through nginx, half WebSocket and half SSE, sent evenly over --ramp seconds;
every tenth client drops mid-answer and resumes (directly: on the other process; through
nginx: through nginx again, wherever it sends it). Printed: first-event p50/p95 through nginx
and direct, events lost and duplicated, and the checks of what the guide promises: every
answer finished, streamed as it was written (not buffered by nginx), the dropped clients
resumed, plain HTTP redirected to HTTPS, a static file served by nginx with its expiry, and
an upload over client_max_body_size refused by nginx (413) from its headers, the daphne
processes never seeing it. Exits 1 when any check fails.

    python benchmarks/deployment.py [--questions 50] [--rounds 2] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATABASE = "ragplatform_deployment"
MIB = 1024 * 1024


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=50, help="per round and path")
    parser.add_argument("--rounds", type=int, default=2, help="direct, nginx, direct, ...")
    parser.add_argument("--pieces", type=int, default=40, help="pieces per answer")
    parser.add_argument("--delay", type=float, default=0.1, help="seconds before each piece")
    parser.add_argument("--ramp", type=float, default=5.0, help="seconds to send a round over")
    parser.add_argument("--upload-mib", type=int, default=100, help="the oversized upload")
    parser.add_argument("--port", type=int, default=8750, help="the first of four ports")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    from benchmarks.stream_load import database_fresh

    database_fresh(DATABASE)
    figures = asyncio.run(run(args))
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    for failure in figures["failures"]:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if figures["failures"] else 0


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from asgiref.sync import sync_to_async
    from django.conf import settings

    from benchmarks.stream_load import users_with_cookies
    from tests.deployment import Ports, deployment_start

    cookies = await sync_to_async(users_with_cookies)(args.questions)
    editor = await sync_to_async(_superuser_cookie)()
    ports = Ports(args.port)
    deployment = await asyncio.to_thread(
        deployment_start,
        DATABASE,
        ports,
        secret_key=settings.SECRET_KEY,
        RAG_DATA_DIR=settings.DATA_DIR,  # this checkout's database server
        RAG_ASKS_PER_MINUTE=10 * args.questions * args.rounds,
        STREAM_PIECES=args.pieces,
        STREAM_PIECE_DELAY_S=args.delay,
    )
    try:
        load_before = os.getloadavg()
        await _warm_up(deployment, cookies[0])
        rounds = await _rounds(args, deployment, cookies)
        probes = await asyncio.to_thread(_probes, args, deployment, ports, editor)
        workers_alive = sum(worker.alive() for worker in deployment.workers)
        load_after = os.getloadavg()
    finally:
        await asyncio.to_thread(deployment.stop)
    figures = await sync_to_async(figures_compute)(args, rounds)
    figures.update(probes, workers_alive=workers_alive)
    figures["load_average_before"] = [round(x, 2) for x in load_before]
    figures["load_average_after"] = [round(x, 2) for x in load_after]
    figures["failures"] = failures(args, figures)
    if figures["failures"]:
        figures["logs"] = str(deployment.folder)  # kept for reading
    else:
        deployment.remove()
    return figures


def _superuser_cookie() -> str:
    from django.contrib.auth import get_user_model

    from tests.processes import session_cookie

    user = get_user_model().objects.create_superuser("deployer", password=None)
    return session_cookie(user)


async def _warm_up(deployment: Any, cookie: str) -> None:
    """One question on each process and one through nginx, not counted: the first answer of
    a process pays for its imports and its pool's connections."""
    from benchmarks.stream_clients import ClientRun, client_run

    for endpoint in [*deployment.servers, deployment.proxy]:
        await client_run(ClientRun("ws", endpoint, None, cookie), 60)


async def _rounds(args: argparse.Namespace, deployment: Any, cookies: list[str]) -> dict[str, list]:
    from benchmarks.stream_clients import ClientRun, client_run

    timeout = args.pieces * args.delay + 60
    runs: dict[str, list[ClientRun]] = {"direct": [], "nginx": []}
    by_round: list[list[ClientRun]] = []
    for n in range(2 * args.rounds):
        path = "direct" if n % 2 == 0 else "nginx"
        batch = []
        for i, cookie in enumerate(cookies):
            if path == "nginx":
                ask_on = resume_on = deployment.proxy
            else:
                ask_on, resume_on = deployment.servers[i % 2], deployment.servers[(i + 1) % 2]
            dropped = i % 10 == 9  # resumed after two tokens
            batch.append(
                ClientRun("ws" if i % 2 else "sse", ask_on, resume_on if dropped else None, cookie)
            )
        done = await asyncio.gather(
            *(
                _after(i * args.ramp / len(batch), client_run(r, timeout))
                for i, r in enumerate(batch)
            )
        )
        runs[path] += done
        by_round.append(done)
    return {**runs, "by_round": by_round}


async def _after(delay_s: float, run: Any) -> Any:
    await asyncio.sleep(delay_s)
    return await run


def _probes(args: argparse.Namespace, deployment: Any, ports: Any, cookie: str) -> dict[str, Any]:
    from tests.deployment import (
        UPLOAD_PATH,
        oversized_upload_probe,
        redirect_probe,
        static_probe,
        upload_probe,
    )

    status, location = redirect_probe(ports)
    static = static_probe(deployment)
    started = time.monotonic()
    refusal = oversized_upload_probe(deployment.proxy, cookie, args.upload_mib * MIB + 1)
    refused_after = time.monotonic() - started
    error_log = deployment.nginx.log.read_text(errors="replace")
    # Below the limit, an upload goes through to daphne and a task worker processes it: the
    # one request for the upload path the daphne processes' access logs may show.
    upload_status, document_status = upload_probe(deployment.proxy, cookie)
    time.sleep(0.5)  # daphne writes its access log line after the response
    return {
        "nginx_t": deployment.nginx.config_test().strip().splitlines(),
        "redirect": [status, location],
        "static_status": static.status_code,
        "static_cache_control": static.headers.get("cache-control", ""),
        "static_server": static.headers.get("server", ""),
        "upload_bytes_declared": args.upload_mib * MIB + 1,
        "upload_status": refusal.status,
        "upload_answered_by": refusal.server,
        "upload_refused_after_ms": round(refused_after * 1000, 1),
        "upload_in_nginx_error_log": "client intended to send too large body" in error_log,
        "small_upload_status": upload_status,
        "small_upload_document": document_status,
        "upload_requests_seen_by_daphne": deployment.daphne_requests(f"POST {UPLOAD_PATH}"),
    }


def figures_compute(args: argparse.Namespace, rounds: dict[str, list]) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "questions_per_round": args.questions,
        "rounds": args.rounds,
        "pieces": args.pieces,
        "piece_delay_s": args.delay,
        "ramp_s": args.ramp,
    }
    from benchmarks.stream_load import _pct

    for path in ("direct", "nginx"):
        figures[path] = _path_figures(args, rounds[path])
    # Each round's median alone (direct, nginx, direct, ...): the machine's other work moves
    # between rounds, so a difference between paths counts only if it holds in every pair.
    figures["first_event_ms_p50_by_round"] = [
        _pct(sorted((r.first_at - r.sent_at) * 1000 for r in runs if r.first_at), 50)
        for runs in rounds["by_round"]
    ]
    return figures


def _path_figures(args: argparse.Namespace, runs: list) -> dict[str, Any]:
    from apps.answers.turn.selectors import turn_events_since
    from benchmarks.stream_load import _pct

    lost = duplicated = 0
    for r in runs:
        stored = {e["seq"] for e in turn_events_since(turn_id=r.turn)} if r.turn else set()
        got = [e["seq"] for e in r.received]
        lost += len(stored - set(got))
        duplicated += len(got) - len(set(got))
    firsts = sorted((r.first_at - r.sent_at) * 1000 for r in runs if r.first_at is not None)
    finished = [r for r in runs if r.terminal and r.terminal["type"] == "finished"]
    dropped = [r for r in runs if r.resume_on is not None]
    # Written over (pieces - 1) * delay: a buffered stream arrives in one burst at the end.
    written_s = (args.pieces - 1) * args.delay
    spreads = [_token_spread(r) / written_s for r in runs if r.resume_on is None]
    return {
        "questions": len(runs),
        "finished": len(finished),
        "first_event_ms_p50": _pct(firsts, 50),
        "first_event_ms_p95": _pct(firsts, 95),
        "events_lost": lost,
        "events_duplicated": duplicated,
        "dropped_and_resumed": sum(1 for r in dropped if r.following_again and r in finished),
        "dropped": len(dropped),
        "tokens_spread_min": round(min(spreads), 2) if spreads else None,
        "client_errors": sorted({r.error for r in runs if r.error})[:5],
    }


def _token_spread(run: Any) -> float:
    """Seconds from the first token's arrival to the last's."""
    times = [at for at, e in zip(run.arrivals, run.received, strict=True) if e["type"] == "token"]
    return max(times) - min(times) if len(times) > 1 else 0.0


def failures(args: argparse.Namespace, figures: dict[str, Any]) -> list[str]:
    """What differs from the guide (or from an answer's promise), in words."""
    found = []
    for path in ("direct", "nginx"):
        f = figures[path]
        if f["finished"] != f["questions"]:
            found.append(f"{path}: {f['finished']} of {f['questions']} answers finished")
        if f["events_lost"] or f["events_duplicated"]:
            found.append(f"{path}: {f['events_lost']} lost, {f['events_duplicated']} repeated")
        if f["dropped_and_resumed"] != f["dropped"]:
            found.append(f"{path}: {f['dropped_and_resumed']} of {f['dropped']} resumed")
        # A buffered answer arrives in one burst (a spread near 0); a busy machine squeezes
        # a streamed one too, but not below a fifth of the time it was written over.
        if f["tokens_spread_min"] is None or f["tokens_spread_min"] < 0.2:
            found.append(f"{path}: an answer arrived in a burst ({f['tokens_spread_min']})")
    if not any("test is successful" in line for line in figures["nginx_t"]):
        found.append(f"nginx -t: {figures['nginx_t']}")
    status, location = figures["redirect"]
    if status != 301 or not location.startswith("https://"):
        found.append(f"plain HTTP: {status} {location!r}, not a redirect to HTTPS")
    if figures["static_status"] != 200 or "max-age=2592000" not in figures["static_cache_control"]:
        found.append(f"static: {figures['static_status']} {figures['static_cache_control']!r}")
    if figures["upload_status"] != 413 or not figures["upload_answered_by"].startswith("nginx"):
        found.append(f"upload: {figures['upload_status']} from {figures['upload_answered_by']}")
    if figures["small_upload_status"] != 202 or figures["small_upload_document"] != "ready":
        found.append(
            f"small upload: {figures['small_upload_status']}, {figures['small_upload_document']}"
        )
    if figures["upload_requests_seen_by_daphne"] != 1:  # the small one only
        found.append(f"upload: daphne saw {figures['upload_requests_seen_by_daphne']} requests")
    if figures["workers_alive"] != 2:
        found.append(f"workers alive: {figures['workers_alive']} of 2")
    return found


if __name__ == "__main__":
    raise SystemExit(main())
