"""The deployment of docs/guide/15-deployment.md on one machine: nginx with the guide's
configuration (tests/nginx.py) in front of two daphne processes (`tests.stream_server`) and
two task workers (`tests.stream_worker`), all on one database, with RAG_ENV=production and the
proxy settings the guide names. What `benchmarks/deployment.py` measures and
`tests/ragplatform/test_deployment.py` checks, and the probes of what the guide promises
beyond answers: the plain-HTTP redirect, the static files and an oversized upload.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from django.conf import settings

from tests.nginx import Nginx, Proxy, Site, certificate_make
from tests.processes import CSRF_TOKEN, ROOT, Server, Worker, servers_env

UPLOAD_PATH = "/api/documents/"


@dataclass(frozen=True)
class Ports:
    """The ports of one deployment: HTTPS and HTTP on nginx, then the two daphne processes."""

    base: int

    @property
    def https(self) -> int:
        return self.base

    @property
    def http(self) -> int:
        return self.base + 1

    @property
    def upstreams(self) -> tuple[int, int]:
        return (self.base + 2, self.base + 3)


@dataclass
class Deployment:
    folder: Path
    nginx: Nginx
    servers: list[Server]
    workers: list[Worker]

    @property
    def proxy(self) -> Proxy:
        return self.nginx.proxy()

    def stop(self) -> None:
        self.nginx.stop()
        for server in self.servers:
            server.stop()
        for worker in self.workers:
            worker.stop()

    def daphne_requests(self, request: str) -> int:
        """Requests whose line starts with `request` ("POST /path") in the daphne processes'
        access logs (their stdout)."""
        logs = [server.log.read_text(errors="replace") for server in self.servers]
        return sum(log.count(f'"{request}') for log in logs)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def platform_env(
    database: str, ports: Ports, *, static_root: Path, secret_key: str, **extra: object
) -> dict[str, str]:
    """Production, as the guide's checklist has it, behind the guide's proxy: the site's name
    is 127.0.0.1 and, on a port of its own, its origin is listed as trusted (the guide's rule
    for a site on another port). The secret key is the caller's, so the sessions it stores
    sign its clients in."""
    return servers_env(
        database,
        RAG_ENV="production",
        DJANGO_SECRET_KEY=secret_key,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_CSRF_TRUSTED_ORIGINS=f"https://127.0.0.1:{ports.https}",
        RAG_PROXY_SSL_HEADER="X-Forwarded-Proto",
        RAG_PROXY_COUNT=1,
        RAG_STATIC_ROOT=static_root,
        **extra,
    )


def static_collect(env: dict[str, str]) -> None:
    """`manage.py collectstatic --noinput`, as the guide's checklist runs it."""
    command = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"]
    full = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    subprocess.run(command, cwd=ROOT, env=full, check=True)


def deployment_start(
    database: str, ports: Ports, *, secret_key: str, **extra: object
) -> Deployment:
    """Everything started and listening; nginx's configuration checked with `nginx -t` first
    (a rejected configuration raises)."""
    folder = Path(tempfile.mkdtemp(prefix="deployment-"))
    folder.chmod(0o755)  # nginx's unprivileged user reads the certificate and static files
    static_root = folder / "static"
    env = platform_env(database, ports, static_root=static_root, secret_key=secret_key, **extra)
    static_collect(env)
    cert, key = certificate_make(folder)
    site = Site(ports.https, ports.http, ports.upstreams, cert, key, static_root)
    nginx = Nginx(folder / "nginx", site)
    origin = f"https://127.0.0.1:{ports.https}"
    servers = [
        # Reached directly, its clients say what nginx would: HTTPS, from the site's page.
        Server(
            env=env,
            log=folder / f"daphne-{port}.log",
            port=port,
            site_origin=origin,
            forwarded={"X-Forwarded-Proto": "https"},
        )
        for port in ports.upstreams
    ]
    workers = [Worker(env=env, log=folder / f"worker-{n}.log") for n in (1, 2)]
    deployment = Deployment(folder, nginx, servers, workers)
    try:
        nginx.config_test()
        for server in servers:
            server.start()
        for worker in workers:
            worker.start()
        nginx.start()
    except BaseException:
        deployment.stop()
        raise
    return deployment


def redirect_probe(ports: Ports, path: str = "/chat/?q=1") -> tuple[int, str]:
    """Plain HTTP on nginx's port 80 stand-in: (status, Location)."""
    response = httpx.get(f"http://127.0.0.1:{ports.http}{path}", follow_redirects=False)
    return response.status_code, response.headers.get("location", "")


def static_probe(deployment: Deployment) -> httpx.Response:
    """One collected file (its hashed name from the manifest) fetched through nginx."""
    manifest = json.loads((deployment.nginx.site.static_root / "staticfiles.json").read_text())
    name = sorted(manifest["paths"].values())[0]
    proxy = deployment.proxy
    return httpx.get(f"{proxy.http}/static/{name}", verify=proxy.tls)


@dataclass(frozen=True)
class Refusal:
    status: int
    server: str  # the response's Server header: who answered


def oversized_upload_probe(proxy: Proxy, cookie: str, size: int) -> Refusal:
    """An upload declaring `size` bytes through nginx; only its headers are sent, so a
    response means it was refused unread (nginx answers from Content-Length alone)."""
    head = (
        f"POST {UPLOAD_PATH} HTTP/1.1\r\n"
        f"Host: {proxy.host}:{proxy.port}\r\n"
        f"Cookie: {cookie}\r\n"
        f"Origin: {proxy.origin}\r\n"
        "Content-Type: multipart/form-data; boundary=x\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    with (
        socket.create_connection((proxy.host, proxy.port), timeout=30) as raw,
        proxy.tls.wrap_socket(raw, server_hostname=proxy.host) as tls,
    ):
        tls.sendall(head.encode())
        reply = _response_head(tls)
    status_line, *header_lines = reply.split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines if ": " in line)
    return Refusal(int(status_line.split()[1]), headers.get("Server", ""))


def _response_head(tls: ssl.SSLSocket) -> str:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = tls.recv(4096)
        if not chunk:
            break
        received += chunk
    return received.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def upload_probe(proxy: Proxy, cookie: str, *, timeout_s: float = 60) -> tuple[int, str]:
    """A small Markdown upload through nginx, then its document's status polled until a task
    worker has processed it: (the upload's status, the document's last status)."""
    headers = {
        "Cookie": f"{cookie}; {settings.CSRF_COOKIE_NAME}={CSRF_TOKEN}",
        "X-CSRFToken": CSRF_TOKEN,
        "Origin": proxy.origin,
    }
    with httpx.Client(base_url=proxy.http, headers=headers, verify=proxy.tls) as client:
        text = b"# Deployment\n\nThe proxy passes uploads below its limit to daphne.\n"
        files = {"file": ("deployment.md", text, "text/markdown")}
        response = client.post(UPLOAD_PATH, files=files, data={"collection": "Handbook"})
        if response.status_code != 202:
            return response.status_code, response.text[:200]
        url, state = f"{UPLOAD_PATH}{response.json()['id']}/", "pending"
        deadline = time.monotonic() + timeout_s
        while state not in {"ready", "failed"} and time.monotonic() < deadline:
            time.sleep(0.2)
            state = str(client.get(url).json()["status"])
        return response.status_code, state
