from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.corpus.ingestion.processing import search_index_rebuild
from apps.corpus.models import Document


class Command(BaseCommand):
    help = "Rebuild the keyword index (tsvector, lengths, BM25 postings) of ingested documents."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", help="only this collection")

    def handle(self, *args: Any, **options: Any) -> None:
        documents = Document.objects.exclude(indexed_sha256="")
        if options["collection"]:
            documents = documents.filter(collection__name=options["collection"])
        ids = list(documents.values_list("pk", flat=True))
        search_index_rebuild(document_ids=ids)
        self.stdout.write(f"Rebuilt the keyword index of {len(ids)} documents.")
