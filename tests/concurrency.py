"""Run the same work in several threads released at one moment, as several processes would:
each thread has its own database connection, closed when it is done."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connections

T = TypeVar("T")


def run_at_once(work: Callable[[], T], *, threads: int) -> list[T]:
    """`work`'s results, in the order the threads finished; a thread's exception is raised."""
    barrier = threading.Barrier(threads)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(work())
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    started = [threading.Thread(target=run) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    if errors:
        raise errors[0]
    return results
