"""`manage.py serve` (what `make serve` runs): bootstrap, then daphne and a worker kept running."""

from __future__ import annotations

import sys
import time
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import LazySettings
from django.core.management import call_command

from ragplatform.supervise import processes_supervise


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Record what serve would supervise instead of starting it."""
    seen: dict[str, Any] = {}

    def supervise(**kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(
        "ragplatform.management.commands.serve.platform_bootstrap",
        lambda say: seen.setdefault("bootstrapped", True),
    )
    monkeypatch.setattr("ragplatform.management.commands.serve.processes_supervise", supervise)
    return seen


def test_serve_bootstraps_then_supervises_daphne_and_a_worker(started: dict[str, Any]) -> None:
    out = StringIO()
    call_command("serve", "--host", "127.0.0.1", "--port", "8123", stdout=out)

    assert started["bootstrapped"]
    assert started["worker"][-1] == "worker"
    assert started["server"][-5:] == [
        "-b",
        "127.0.0.1",
        "-p",
        "8123",
        "ragplatform.asgi:application",
    ]
    assert "http://127.0.0.1:8123/" in out.getvalue()


def test_serve_no_worker_starts_only_daphne(started: dict[str, Any]) -> None:
    call_command("serve", "--no-worker", stdout=StringIO())
    assert started["worker"] is None and "server" in started


def test_a_worker_that_exits_is_started_again(tmp_path: Path, settings: LazySettings) -> None:
    settings.RAG_WORKER_DB_RETRY_MAX_S = 1.0
    starts = tmp_path / "starts"
    worker = [sys.executable, "-c", f"open({str(starts)!r}, 'a').write('x'); raise SystemExit(3)"]
    server = [sys.executable, "-c", "import time; time.sleep(5); raise SystemExit(7)"]
    said: list[str] = []

    began = time.monotonic()
    code = processes_supervise(server=server, worker=worker, say=said.append, poll_s=0.05)

    assert code == 7 and time.monotonic() - began >= 4.5  # the server's run decides the end
    assert len(starts.read_text()) >= 3  # started, then again after each exit
    assert said and "exited (code 3)" in said[0]


def test_the_worker_stops_with_the_server(tmp_path: Path) -> None:
    alive = tmp_path / "alive"
    worker = [sys.executable, "-c", f"import time; open({str(alive)!r}, 'w'); time.sleep(60)"]
    server = [sys.executable, "-c", "import time; time.sleep(2)"]

    began = time.monotonic()
    processes_supervise(server=server, worker=worker, say=print, poll_s=0.05)

    assert alive.exists() and time.monotonic() - began < 20
