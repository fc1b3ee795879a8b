"""`manage.py serve` (what `make serve` runs): bootstrap, a worker, then daphne on the address."""

from __future__ import annotations

import subprocess
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command


class _Worker:
    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.stopped = False

    def terminate(self) -> None:
        self.stopped = True

    def wait(self, timeout: float) -> int:
        return 0


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Record what serve would start instead of starting it."""
    seen: dict[str, Any] = {"workers": []}

    def popen(args: list[str]) -> _Worker:
        seen["workers"].append(_Worker(args))
        return seen["workers"][-1]

    def run(args: list[str], check: bool) -> None:
        seen["server"] = args

    monkeypatch.setattr(
        "ragplatform.management.commands.serve.platform_bootstrap",
        lambda say: seen.setdefault("bootstrapped", True),
    )
    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(subprocess, "run", run)
    return seen


def test_serve_bootstraps_starts_a_worker_and_daphne(started: dict[str, Any]) -> None:
    out = StringIO()
    call_command("serve", "--host", "127.0.0.1", "--port", "8123", stdout=out)

    assert started["bootstrapped"]
    (worker,) = started["workers"]
    assert worker.args[-1] == "worker" and worker.stopped
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
    assert started["workers"] == [] and "server" in started
