from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.routing.evaluation import format_report
from apps.answers.routing.services import (
    CLASSIFIERS,
    RouterConfigurationError,
    router_classifier_build,
    router_dataset_default,
    router_evaluation_run,
)
from apps.answers.routing.trained import DEFAULT_ARTEFACT_PATH


class Command(BaseCommand):
    help = "Score the router on a labelled set: accuracy, macro-F1, per-class figures, confusion matrix, latency."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dataset",
            type=Path,
            default=None,
            help="JSONL set (default: the shipped labelled set; for --split unseen the unseen set)",
        )
        parser.add_argument("--split", default="test", help="train|test|unseen|all")
        parser.add_argument("--classifier", choices=CLASSIFIERS, default="trained")
        parser.add_argument(
            "--artefact", type=Path, default=DEFAULT_ARTEFACT_PATH, help="trained model to score"
        )
        parser.add_argument(
            "--no-context", action="store_true", help="classify follow-ups without their history"
        )
        parser.add_argument("--json", type=Path, default=None, help="also write the report here")

    def handle(self, *args: Any, **options: Any) -> None:
        split: str = options["split"]
        dataset: Path = options["dataset"] or router_dataset_default(split=split)
        try:
            classifier = router_classifier_build(
                name=options["classifier"], artefact=options["artefact"]
            )
            result = router_evaluation_run(
                classifier=classifier,
                dataset=dataset,
                split=split,
                use_context=not options["no_context"],
            )
        except RouterConfigurationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(format_report(result))
        if options["json"]:
            report = json.dumps(result.as_json(), indent=2) + "\n"
            options["json"].write_text(report, encoding="utf-8")
