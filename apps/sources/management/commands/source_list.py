from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.sources.models import Source


class Command(BaseCommand):
    help = "List the sources with their state and last sync."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="one JSON line per source")

    def handle(self, *args: Any, **options: Any) -> None:
        for source in Source.objects.select_related("collection"):
            row = {
                "name": source.name,
                "kind": source.kind,
                "location": source.location,
                "collection": source.collection.name,
                "status": source.status,
                "every_minutes": source.every_minutes,
                "paused": source.paused,
                "last_sync_end": source.sync_ended_at.isoformat() if source.sync_ended_at else None,
                "last_error": source.last_error,
            }
            if options["json"]:
                self.stdout.write(json.dumps(row))
            else:
                self.stdout.write(
                    f"{source.name:30} {source.kind:7} {source.status:8} {source.location}"
                )
