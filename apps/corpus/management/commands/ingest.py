from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.corpus.ingestion.services import collection_get_or_create
from apps.corpus.uploads.batches import paths_ingest


class Command(BaseCommand):
    help = "Ingest files and folders (recursively) into a collection."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", help="files or folders")
        parser.add_argument("--collection", default="Default", help="collection name")
        parser.add_argument(
            "--wait", action="store_true", help="process now instead of queueing for a task worker"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON line per file")
        parser.add_argument(
            "--public",
            action="store_true",
            help="make the collection readable by every signed-in user (new ones are private)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        collection = collection_get_or_create(name=options["collection"], public=options["public"])
        try:
            outcomes = paths_ingest(
                paths=options["paths"], collection=collection, wait=options["wait"]
            )
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        for outcome in outcomes:
            doc = outcome.document
            status = doc.status if doc else "refused"
            if options["json"]:
                row = {
                    "path": outcome.path,
                    "action": outcome.action,
                    "document": doc.pk if doc else None,
                    "status": status,
                    "chunks": doc.chunk_count if doc else 0,
                    "message": outcome.message,
                }
                self.stdout.write(json.dumps(row))
            else:
                detail = f" - {outcome.message}" if outcome.message else ""
                self.stdout.write(f"{status:10} {outcome.action:9} {outcome.path}{detail}")
        failed = sum(1 for o in outcomes if o.document is None or o.document.status == "failed")
        self.stdout.write(f"{len(outcomes)} files, {failed} failed or refused")
