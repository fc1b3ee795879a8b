from __future__ import annotations

import contextlib
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ragplatform.bootstrap import platform_bootstrap
from ragplatform.supervise import processes_supervise


class Command(BaseCommand):
    help = "Migrate, create the admin account, ingest the demo corpus, then serve with daphne and a task worker (restarted if it exits)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-worker", action="store_true", help="do not start a task worker (manage.py worker)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        platform_bootstrap(say=self.stdout.write)
        worker = None if options["no_worker"] else [sys.executable, "manage.py", "worker"]
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(f"Serving on {url} (admin: {url}admin/). Ctrl-C stops.")
        server = [sys.executable, "-m", "daphne", "-b", options["host"]]
        server += ["-p", str(options["port"]), "ragplatform.asgi:application"]
        with contextlib.suppress(KeyboardInterrupt):
            processes_supervise(server=server, worker=worker, say=self.stdout.write)
