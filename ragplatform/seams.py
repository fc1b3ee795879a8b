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
        self._build: Callable[[], T] | None = None

    def __call__(self) -> T:
        return (self._build or self._configured)()

    @contextmanager
    def override(self, value: T) -> Iterator[T]:
        with self.override_build(lambda: value):
            yield value

    @contextmanager
    def override_build(self, build: Callable[[], T]) -> Iterator[None]:
        """Ask `build` instead of the configured builder while the block runs: for a value
        that must be built anew on each ask, or whose building fails."""
        previous, self._build = self._build, build
        try:
            yield
        finally:
            self._build = previous
