from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.corpus.documents.originals import OriginalsNotInDatabase, originals_move


class Command(BaseCommand):
    help = (
        "Copy document originals stored on this machine's disk (RAG_MEDIA_ROOT, from before "
        "RAG_ORIGINALS_STORAGE=database) into the database, so workers anywhere can read them. "
        "Until then they are still read from the disk on this machine."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="only say what would move")
        parser.add_argument(
            "--delete-local", action="store_true", help="remove each local copy once moved"
        )
        parser.add_argument("--json", action="store_true", help="print a JSON report")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = originals_move(
                dry_run=options["dry_run"], delete_local=options["delete_local"]
            )
        except OriginalsNotInDatabase as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            report = {
                "moved": list(result.moved),
                "already": result.already,
                "missing": list(result.missing),
                "dry_run": options["dry_run"],
            }
            self.stdout.write(json.dumps(report, indent=2))
            return
        verb = "Would move" if options["dry_run"] else "Moved"
        self.stdout.write(
            f"{verb} {len(result.moved)} originals into the database; "
            f"{result.already} were already there; {len(result.missing)} are missing."
        )
        for name in result.missing:
            self.stdout.write(f"  missing: {name}")
