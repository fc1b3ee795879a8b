from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.analytics.models import RouterEvaluation
from apps.answers.providers.configured import chat_model_configured, json_chat_adapter
from apps.answers.routing.evaluation import (
    LABELLED_PATH,
    format_report,
    load_examples,
    router_evaluate,
)
from apps.answers.routing.llm import LLMClassifier
from apps.answers.routing.trained import TrainedClassifier
from apps.answers.routing.types import QueryClassifier


class Command(BaseCommand):
    help = "Score the router on a labelled set: accuracy, macro-F1, per-class figures, confusion matrix, latency."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", type=Path, default=LABELLED_PATH)
        parser.add_argument("--split", default="test", help="train|test|unseen|all")
        parser.add_argument("--classifier", choices=["trained", "llm"], default="trained")
        parser.add_argument("--json", type=Path, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        split = None if options["split"] == "all" else options["split"]
        examples = load_examples(options["dataset"], split=split)
        if not examples:
            raise CommandError(
                f"No examples with split {options['split']!r} in {options['dataset']}"
            )
        classifier = self._classifier(options["classifier"])
        result = asyncio.run(router_evaluate(classifier=classifier, examples=examples))
        self.stdout.write(format_report(result))
        report = result.as_json()
        RouterEvaluation.objects.create(
            classifier=classifier.name,
            dataset=str(options["dataset"]),
            split=options["split"],
            examples=len(examples),
            accuracy=result.accuracy,
            macro_f1=result.macro_f1,
            latency_ms_p50=result.latency_ms_p50,
            latency_ms_p95=result.latency_ms_p95,
            report=report,
        )
        if options["json"]:
            options["json"].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    def _classifier(self, name: str) -> QueryClassifier:
        if name == "trained":
            return TrainedClassifier.from_artefact()
        chat = chat_model_configured()
        if chat is None:
            raise CommandError("--classifier llm needs OPENAI_BASE_URL and RAG_CHAT_MODEL")
        return LLMClassifier(json_chat_adapter(chat))
