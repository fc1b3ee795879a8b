"""What both evaluate commands do first (the leading underscore keeps Django from listing it)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.answers.evaluation.beir import BeirQuery, evaluation_collection_load, queries_load
from apps.corpus.models import Collection


def evaluation_dataset_open(
    command: BaseCommand, *, dataset: Path, split: str, workers: int
) -> tuple[Collection, list[BeirQuery]]:
    """Load the corpus through ingestion and read the split's queries; warn of unready documents."""
    try:
        collection, pending = evaluation_collection_load(dataset=dataset, workers=workers)
        queries = queries_load(dataset, split=split)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    if pending:
        command.stderr.write(f"warning: {pending} documents are not ready (see the admin)")
    return collection, queries
