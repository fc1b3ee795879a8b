from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.answers.sentence_vectors.services import sentence_vectors_fill
from apps.answers.tasks import sentence_vectors_task
from apps.corpus.search.embedders import default_embedder


class Command(BaseCommand):
    help = (
        "Store the offline composer's sentence vectors of chunks that have none yet (the task "
        "workers do it after ingestion and in their periodic sweep; this does it now)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--document", type=int, help="only this document's chunks")
        parser.add_argument(
            "--wait", action="store_true", help="fill here and now instead of queueing a task"
        )
        parser.add_argument("--json", action="store_true", help="print the counts as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["wait"]:
            sentence_vectors_task.enqueue(options["document"])
            self.stdout.write("Queued for the task workers (manage.py worker).")
            return
        result = sentence_vectors_fill(embedder=default_embedder(), document_id=options["document"])
        if options["json"]:
            self.stdout.write(json.dumps(asdict(result)))
            return
        self.stdout.write(
            f"{result.chunks} chunks filled: {result.texts} texts, {result.reused} already "
            f"stored, {result.cached} from the embedding cache, {result.embedded} embedded"
        )
