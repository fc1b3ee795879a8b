from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.corpus.ingestion.rechunk import documents_rechunk
from apps.corpus.models import Collection, Document


class Command(BaseCommand):
    help = (
        "Re-chunk ingested documents from their stored originals with the current parser and "
        "chunker, embedding only chunks whose text changed. Documents, collections and access "
        "stay as they are; citations of old answers keep their snippets."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", help="only this collection (by name)")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="count the chunks that would change; write nothing",
        )
        parser.add_argument("--json", action="store_true", help="print the totals as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = None
        if options["collection"]:
            collection = Collection.objects.filter(name=options["collection"]).first()
            if collection is None:
                raise CommandError(f"No collection named {options['collection']!r}.")
        verbose = options["verbosity"] > 1 and not options["json"]

        def heard(document: Document, outcome: str) -> None:
            if verbose:
                self.stdout.write(f"{document.collection.name}/{document.filename}: {outcome}")

        report = documents_rechunk(
            collection=collection, dry_run=options["dry_run"], on_document=heard
        )
        totals = report.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(totals))
        else:
            verb = "would change" if options["dry_run"] else "changed"
            self.stdout.write(
                f"{report.documents} documents, {report.changed} {verb}; "
                f"{totals['chunks_new']} of {report.chunks_total} chunks new, "
                f"{report.embeddings_computed} embedded by the model."
            )
            for name, why in report.failed.items():
                self.stderr.write(f"failed: {name}: {why}")
        if report.failed:
            raise CommandError(f"{len(report.failed)} documents could not be re-chunked.")
