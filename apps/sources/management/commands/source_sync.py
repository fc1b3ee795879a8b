from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.sources.sync.leases import SyncBusy, SyncLost
from apps.sources.sync.run import source_sync
from apps.sources.sync.selectors import source_by_name
from apps.sources.sync.services import source_sync_request


class Command(BaseCommand):
    help = "Sync a source: queue it for a task worker, or run it here with --wait."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--wait", action="store_true", help="sync and process here instead of queueing"
        )
        parser.add_argument("--json", action="store_true", help="print the counts as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        source = source_by_name(name=options["name"])
        if source is None:
            raise CommandError(f"No source is named {options['name']!r}.")
        try:
            if not options["wait"]:
                source_sync_request(source_id=source.pk)
                self.stdout.write(f"{source.name}: sync queued")
                return
            report = source_sync(source_id=source.pk, wait=True)
        except (SyncBusy, SyncLost) as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(asdict(report)))
        else:
            counts = ", ".join(f"{k} {v}" for k, v in asdict(report).items() if isinstance(v, int))
            self.stdout.write(f"{report.source}: {report.status}; {counts} {report.error}".strip())
        if report.error:
            raise CommandError(report.error)
