"""A real PostgreSQL restart under a running server process and task worker.

The database is a throwaway cluster of its own (tests/pg_cluster.py: the embedded server's
binaries, a temp folder, a loopback port), so stopping it disturbs no other test. Checked:
while it is down a chat socket is closed as unavailable (4503), not as a logout; once it is
back the first request is answered (no dead pooled connection handed out: 0 failed
requests), and the worker, which lost its database too, processes an upload within 30 s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.pg_cluster import Cluster, platform_env, world_seed
from tests.processes import CSRF_TOKEN, Server, Worker, socket_to

pytestmark = pytest.mark.processes
WORKER_BACK_S = 30.0  # the target: the worker alive and working within 30 s
SETTINGS = {
    "DATABASE_POOL_MIN_SIZE": 2,
    # While the database is down, a request waits this long for a connection, then fails.
    "DATABASE_POOL_TIMEOUT_S": 3,
    "RAG_WORKER_HEARTBEAT_S": 1,
}


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("restart")  # the processes' logs
    cluster = Cluster().start()
    try:
        url = cluster.database_ready("restart")
        cookie = world_seed(url)["cookie"]
        env = platform_env(url, **SETTINGS)
        server = Server(env=env, log=root / "server.log").start()
        worker = Worker(env=env, log=root / "worker.log").start()
        yield {"cluster": cluster, "server": server, "worker": worker, "cookie": cookie}
        server.stop()
        worker.stop()
    finally:
        cluster.remove()


def _client(platform: dict[str, Any]) -> httpx.Client:
    server: Server = platform["server"]
    return httpx.Client(
        base_url=server.http,
        headers={
            "Cookie": f"{platform['cookie']}; csrftoken={CSRF_TOKEN}",
            "X-CSRFToken": CSRF_TOKEN,
        },
        timeout=30,
    )


def _upload(client: httpx.Client, name: str) -> int:
    text = f"# {name}\n\nThe {name} rule: every request is answered after a restart.\n"
    response = client.post(
        "/api/documents/",
        files={"file": (f"{name}.md", text.encode())},
        data={"collection": "Handbook"},
    )
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _ready_within(client: httpx.Client, document: int, seconds: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        status = client.get(f"/api/documents/{document}/").json()["status"]
        if status == "ready":
            return time.monotonic() - started
        time.sleep(0.25)
    raise AssertionError(f"document {document} still {status} after {seconds} s")


async def _socket_close_code(platform: dict[str, Any]) -> int | None:
    async with socket_to(platform["server"], platform["cookie"]) as ws:
        try:
            while True:
                await ws.recv()
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None


def test_after_a_database_restart_no_request_fails_and_the_worker_works_again(
    platform: dict[str, Any],
) -> None:
    cluster: Cluster = platform["cluster"]
    with _client(platform) as client:
        _ready_within(client, _upload(client, "before"), WORKER_BACK_S)
        for _ in range(6):  # the pool holds connections that the restart will cut
            assert client.get("/api/conversations/").status_code == 200

        cluster.stop()

        assert asyncio.run(_socket_close_code(platform)) == 4503  # unavailable, not a logout
        time.sleep(1)
        cluster.start()

        statuses = [client.get("/api/conversations/").status_code for _ in range(12)]
        assert statuses == [200] * 12  # the first request after the restart included
        assert platform["worker"].alive()
        took = _ready_within(client, _upload(client, "after"), WORKER_BACK_S)
    assert took < WORKER_BACK_S
