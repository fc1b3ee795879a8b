from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.evaluation.answers import answers_evaluate
from apps.answers.evaluation.beir import BeirQuery
from apps.answers.evaluation.signals import signals_write
from apps.answers.management.commands._composer_thresholds import (
    calibration_arguments,
    providers_with_thresholds,
)
from apps.answers.management.commands._evaluation_dataset import evaluation_dataset_open
from apps.answers.providers.registry import providers_default
from apps.answers.routing.types import Strategy
from apps.corpus.search.legs import SearchFilters


class Command(BaseCommand):
    help = "Score grounded answers on a BEIR-layout set with answers: gold passage cited, refusals, citation precision."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, type=Path)
        parser.add_argument("--split", default="test")
        parser.add_argument("--limit", type=int, default=None)
        parser.add_argument("--workers", type=int, default=0)
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument(
            "--strategy",
            choices=[s.value for s in Strategy if s is not Strategy.NONE],
            default=Strategy.SIMPLE,
            help="retrieval strategy for every question (complex: multi-hop)",
        )
        parser.add_argument(
            "--balanced",
            action="store_true",
            help="with --limit: half answerable questions, half unanswerable, in file order",
        )
        parser.add_argument(
            "--strict",
            action="store_true",
            help="fail the run when any question was answered by a fallback",
        )
        calibration_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        dataset: Path = options["dataset"]
        providers = providers_with_thresholds(
            providers_default(),
            min_evidence=options["min_evidence"],
            min_answerability=options["min_answerability"],
        )
        collection, queries = evaluation_dataset_open(
            self, dataset=dataset, split=options["split"], workers=options["workers"]
        )
        # Unanswerable questions have no qrels; they count when the set marks them.
        queries = [q for q in queries if q.relevant or q.extra.get("is_impossible")]
        queries = _limited(queries, limit=options["limit"], balanced=options["balanced"])
        scores = answers_evaluate(
            queries=queries,
            providers=providers,
            filters=SearchFilters(collection_ids=(collection.pk,)),
            budget=settings.RAG_CONTEXT_BUDGET_TOKENS,
            strategy=Strategy(options["strategy"]),
            dataset=dataset.name,
        )
        summary = scores.summary(
            dataset=dataset.name,
            configured_composer=providers.composer.name,
            questions=scores.answered_by,
            strategy=Strategy(options["strategy"]),
            split=options["split"],
            min_evidence=options["min_evidence"],
            min_answerability=options["min_answerability"],
        )
        # Which composer answered each question goes to the --json file; the screen gets counts.
        shown = {key: value for key, value in summary.items() if key != "questions"}
        self.stdout.write(json.dumps(shown, indent=2))
        if summary["fallbacks"]:
            self.stderr.write(
                f"{summary['fallbacks']} of {len(queries)} questions were answered by a fallback, "
                f'not {providers.composer.name}: see "fallback_reasons" and "by_composer".'
            )
        if scores.errors:
            self.stderr.write(
                f"{len(scores.errors)} of {len(queries)} questions failed in the composer; "
                'they are listed under "errors" and left out of the figures.'
            )
        if options["json"]:
            options["json"].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        if options["signals"]:
            signals_write(options["signals"], scores.signals)
        if options["strict"] and summary["fallbacks"]:
            raise CommandError(f"--strict: {summary['fallbacks']} answers came from a fallback")


def _limited(queries: list[BeirQuery], *, limit: int | None, balanced: bool) -> list[BeirQuery]:
    if limit is None or not balanced:
        return queries[:limit]
    answerable = [q for q in queries if not q.extra.get("is_impossible")]
    unanswerable = [q for q in queries if q.extra.get("is_impossible")]
    return answerable[: limit - limit // 2] + unanswerable[: limit // 2]
