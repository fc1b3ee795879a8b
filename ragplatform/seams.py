"""A seam: one process-wide place to swap a provider (tests, benchmarks) without patching
module attributes, so every caller that asks the seam gets the replacement."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class Seam(Generic[T]):
    """The configured value, or the one an `override` block put in place."""

    def __init__(self, configured: Callable[[], T]) -> None:
        self._configured = configured
        self._override: T | None = None

    def __call__(self) -> T:
        return self._override if self._override is not None else self._configured()

    @contextmanager
    def override(self, value: T) -> Iterator[T]:
        previous, self._override = self._override, value
        try:
            yield value
        finally:
            self._override = previous
