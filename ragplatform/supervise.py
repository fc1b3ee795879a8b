"""`manage.py serve`'s processes: the web server in front, a task worker kept running beside it.

A worker that exits (a crash, an out-of-memory kill, a bug the database loop does not cover)
is started again after a second, and after a back-off that doubles up to
RAG_WORKER_DB_RETRY_MAX_S while it keeps exiting within RESTART_RESET_S of starting (at once
when it ran longer); the server stopping ends both. Production runs its workers under its own supervisor instead
(docs/guide/15-deployment.md).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence

from django.conf import settings

RESTART_RESET_S = 60.0  # a worker that ran this long exited for a new reason: no back-off
POLL_S = 0.5


def processes_supervise(
    *,
    server: Sequence[str],
    worker: Sequence[str] | None,
    say: Callable[[str], None],
    poll_s: float = POLL_S,
) -> int:
    """Run `server` until it exits, restarting `worker` whenever it exits; returns the
    server's exit code (the worker is stopped on the way out)."""
    web = subprocess.Popen(server)  # noqa: S603 - our own interpreter and arguments
    running = _Worker(worker, say=say) if worker else None
    try:
        while web.poll() is None:
            if running is not None:
                running.keep_alive()
            time.sleep(poll_s)
        return web.returncode
    finally:
        if web.poll() is None:
            web.terminate()
            web.wait(timeout=10)
        if running is not None:
            running.stop()


class _Worker:
    def __init__(self, command: Sequence[str], *, say: Callable[[str], None]) -> None:
        self.command, self.say = list(command), say
        self.delay = 0.0
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        self.process = subprocess.Popen(self.command)  # noqa: S603 - our own arguments
        self.started = self.due = time.monotonic()

    def keep_alive(self) -> None:
        code = self.process.poll()
        if code is None:
            return
        now = time.monotonic()
        if self.due <= self.started:  # just noticed: decide when to start it again
            ran = now - self.started
            self.delay = 0.0 if ran >= RESTART_RESET_S else _next_delay(self.delay)
            self.due = now + self.delay
            self.say(f"The task worker exited (code {code}); starting it again in {self.delay:g} s")
        if now >= self.due:
            self.restarts += 1
            self._start()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _next_delay(delay: float) -> float:
    return min(max(delay * 2, 1.0), settings.RAG_WORKER_DB_RETRY_MAX_S)
