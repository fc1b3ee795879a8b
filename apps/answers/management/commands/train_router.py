from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.answers.routing.evaluation import LABELLED_PATH
from apps.answers.routing.services import router_train
from apps.answers.routing.trained import DEFAULT_ARTEFACT_PATH


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
        report = router_train(
            dataset=options["dataset"],
            artefact=options["artefact"],
            seed=options["seed"],
            include_db=options["include_db"],
        )
        self.stdout.write(json.dumps(asdict(report), indent=2, default=str))
