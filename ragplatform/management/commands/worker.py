"""`manage.py worker`: django-tasks-db's task loop, plus a heartbeat and the periodic jobs.

The options are db_worker's; the task loop is db_worker's own. Beside it, one thread renews
this process's heartbeat row and another runs every job registered in `ragplatform.periodic`
(sweepers); a lost database pauses the loop until it answers again. Code reloading is not offered: a reload would leave the threads of the old code
running.
"""

from __future__ import annotations

import os
import socket
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import CommandError
from django.utils import timezone
from django_tasks_db.management.commands import db_worker

from ragplatform.worker_runtime import (
    TrackedWorker,
    WorkerState,
    background_start,
    background_stop,
    task_loop_supervised,
)
from ragplatform.workers import WorkerIdentity


class Command(db_worker.Command):
    help = (
        "Run background tasks (document processing, post-turn steps), renew this worker's "
        "heartbeat and run the periodic jobs (sweepers)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(reload=False)

    def handle(self, *args: Any, **options: Any) -> None:
        self.configure_logging(options["verbosity"])
        if options["reload"]:
            raise CommandError("manage.py worker does not reload code; restart it instead")
        queue_names = options["queue_name"].split(",")
        excluded = options["exclude_queues"].split(",") if options["exclude_queues"] else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        identity = WorkerIdentity(
            worker_id=options["worker_id"],
            host=socket.gethostname(),
            pid=os.getpid(),
            started_at=timezone.now(),
        )
        state = WorkerState(identity)
        worker = TrackedWorker(
            state=state,
            queue_names=queue_names,
            interval=options["interval"],
            batch=options["batch"],
            backend_name=options["backend_name"],
            startup_delay=options["startup_delay"],
            max_tasks=options["max_tasks"],
            worker_id=identity.worker_id,
            excluded_queue_names=excluded,
        )
        threads = background_start(state)
        try:
            worker.configure_signals()
            task_loop_supervised(worker)
        finally:
            background_stop(state, threads)
