from __future__ import annotations

import subprocess
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ragplatform.bootstrap import platform_bootstrap


class Command(BaseCommand):
    help = "Migrate, create the admin account, ingest the demo corpus, then serve with daphne and a task worker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-worker", action="store_true", help="do not start a task worker (manage.py worker)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        platform_bootstrap(say=self.stdout.write)
        worker = None
        if not options["no_worker"]:
            worker = subprocess.Popen([sys.executable, "manage.py", "worker"])
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(f"Serving on {url} (admin: {url}admin/). Ctrl-C stops.")
        try:
            subprocess.run(  # noqa: S603
                [
                    sys.executable,
                    "-m",
                    "daphne",
                    "-b",
                    options["host"],
                    "-p",
                    str(options["port"]),
                    "ragplatform.asgi:application",
                ],
                check=False,
            )
        except KeyboardInterrupt:
            pass
        finally:
            if worker:
                worker.terminate()
                worker.wait(timeout=10)
