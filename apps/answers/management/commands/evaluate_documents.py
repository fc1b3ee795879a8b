from __future__ import annotations

import json
from argparse import ArgumentTypeError
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.evaluation.document_questions import (
    KINDS,
    DocumentQuestion,
    QuestionFileError,
    document_questions_load,
)
from apps.answers.evaluation.document_report import documents_lines, summary_table
from apps.answers.evaluation.document_scores import QuestionRecord, records_summarise
from apps.answers.evaluation.documents import (
    DocumentsFolderError,
    DocumentsLoaded,
    documents_evaluate,
    evaluation_documents_load,
    evaluation_files,
)
from apps.answers.evaluation.signals import signals_write
from apps.answers.management.commands._composer_thresholds import (
    calibration_arguments,
    providers_with_thresholds,
)
from apps.answers.providers.registry import providers_default, providers_override


class Command(BaseCommand):
    help = (
        "Ingest a folder of real documents, ask each question of a questions file through the "
        "full turn path (router included), and score the stored turns: correct, gold file "
        "cited, refusals, 'Well supported' precision, calibration, per kind and file format."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", required=True, type=Path, help="folder of documents")
        parser.add_argument(
            "--questions", required=True, type=Path, help="questions file (JSON lines)"
        )
        parser.add_argument(
            "--collection", default=None, help='collection to use (default "evaluation: DIR")'
        )
        parser.add_argument("--json", type=Path, default=None, help="write every figure here")
        parser.add_argument(
            "--limit", type=_positive, default=None, help="the first N questions chosen only"
        )
        parser.add_argument(
            "--kind", action="append", choices=KINDS, default=[], help="only these kinds"
        )
        parser.add_argument(
            "--language", action="append", default=[], help="only these languages (en, fa)"
        )
        calibration_arguments(parser)
        parser.add_argument(
            "--wait",
            type=float,
            default=1800.0,
            help="seconds to wait for documents another process is still ingesting",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        docs: Path = options["docs"]
        try:  # every input checked before anything is stored
            files = evaluation_files(docs)
            questions = document_questions_load(
                options["questions"], files={path.name for path in files}
            )
        except (DocumentsFolderError, QuestionFileError) as exc:
            raise CommandError(str(exc)) from exc
        questions = _chosen(questions, options)
        if not questions:
            raise CommandError("No question is left after --kind, --language and --limit")
        loaded = evaluation_documents_load(
            files=files,
            collection_name=options["collection"] or f"evaluation: {docs.resolve().name}",
            timeout_s=options["wait"],
            progress=lambda name, action: self.stderr.write(f"  {action:9} {name}"),
        )
        for line in documents_lines(loaded):
            self.stdout.write(line)
        providers = providers_with_thresholds(
            providers_default(),
            min_evidence=options["min_evidence"],
            min_answerability=options["min_answerability"],
        )
        with providers_override(providers):
            records = documents_evaluate(
                questions=questions,
                collection_name=loaded.collection.name,
                progress=lambda done, record: self._progress(done, len(questions), record),
            )
        summary = records_summarise(records)
        self.stdout.write("")
        for line in summary_table(summary):
            self.stdout.write(line)
        seconds = sum(r.latency_ms for r in records) / 1000
        self.stdout.write(f"\n{len(records)} questions in {seconds:.0f} s")
        if options["json"]:
            _json_write(options, loaded, summary, records)
        if options["signals"]:
            dataset = docs.resolve().name
            signals_write(options["signals"], (r.signals(dataset=dataset) for r in records))

    def _progress(self, done: int, total: int, record: QuestionRecord) -> None:
        verdict = "right" if record.correct else "wrong"
        detail = record.error or f"{record.route}, {record.band or 'no band'}"
        self.stderr.write(f"  [{done}/{total}] {record.id}: {verdict} ({detail})")


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ArgumentTypeError("must be at least 1")
    return number


def _chosen(questions: list[DocumentQuestion], options: dict[str, Any]) -> list[DocumentQuestion]:
    kinds, languages = set(options["kind"]), set(options["language"])
    chosen = [
        q
        for q in questions
        if (not kinds or q.kind in kinds) and (not languages or q.language in languages)
    ]
    return chosen[: options["limit"]]


def _json_write(
    options: dict[str, Any],
    loaded: DocumentsLoaded,
    summary: dict[str, Any],
    records: list[QuestionRecord],
) -> None:
    providers = providers_default()
    run = {
        "date": datetime.now(tz=UTC).isoformat(timespec="seconds"),
        "docs": str(options["docs"]),
        "questions_file": str(options["questions"]),
        "collection": loaded.collection.name,
        "composer": providers.composer.name,
        "embedder": providers.embedder.model_id,
        "documents": {
            "files": len(loaded.files),
            "processed": loaded.processed,
            "unchanged": loaded.unchanged,
            "failed": [{"file": name, "error": why} for name, why in loaded.failed],
            "pending": list(loaded.pending),
            "stale": list(loaded.stale),
            "seconds": loaded.seconds,
        },
        "questions_seconds": round(sum(r.latency_ms for r in records) / 1000, 1),
    }
    body = {"run": run, "summary": summary, "questions": [r.as_dict() for r in records]}
    options["json"].write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", "utf-8")
