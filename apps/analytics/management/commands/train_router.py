from __future__ import annotations

import json
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.analytics.router_data import labelled_queries_export, labelled_queries_import
from apps.answers.routing.evaluation import LABELLED_PATH
from apps.answers.routing.trained import DEFAULT_ARTEFACT_PATH
from apps.answers.routing.training import train_router


class Command(BaseCommand):
    help = (
        "Train the offline router on the labelled set (reproducibly) and write its JSON artefact."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", type=Path, default=LABELLED_PATH)
        parser.add_argument("--artefact", type=Path, default=DEFAULT_ARTEFACT_PATH)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--include-db",
            action="store_true",
            help="also train on rows analysts added in the admin (LabelledQuery)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        dataset: Path = options["dataset"]
        with tempfile.TemporaryDirectory() as folder:
            if options["include_db"]:
                labelled_queries_import(path=dataset)
                dataset = Path(folder) / "labelled.jsonl"
                labelled_queries_export(path=dataset)
            report = train_router(
                dataset_path=dataset, artefact_path=options["artefact"], seed=options["seed"]
            )
        self.stdout.write(json.dumps(asdict(report), indent=2, default=str))
