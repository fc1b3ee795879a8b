"""BEIR-layout datasets (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv or qrels.tsv).

The corpus goes through the normal ingestion path, one HTML document per record (HTML keeps
the text verbatim where Markdown would read "1." or "*" as markup), in a collection of its
own; vectors come from the embedding cache when the same text was embedded before.
"""

from __future__ import annotations

import csv
import html
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.models import Collection, DocumentStatus


@dataclass(frozen=True)
class BeirQuery:
    query_id: str
    text: str
    relevant: dict[str, int]  # corpus id -> graded relevance
    extra: dict[str, object]  # e.g. PersianQA answers and is_impossible


def corpus_records(dataset: Path) -> Iterator[dict[str, str]]:
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def record_filename(corpus_id: str) -> str:
    return f"{corpus_id}.html"


def corpus_id_from_filename(filename: str) -> str:
    return filename.removesuffix(".html")


def record_html(record: dict[str, str]) -> bytes:
    title = html.escape(record.get("title") or "")
    body = "".join(
        f"<p>{html.escape(paragraph)}</p>"
        for paragraph in (record.get("text") or "").split("\n\n")
        if paragraph.strip()
    )
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def qrels_path(dataset: Path, split: str) -> Path:
    for candidate in (dataset / "qrels" / f"{split}.tsv", dataset / "qrels.tsv"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"No qrels for split {split!r} in {dataset}")


def queries_load(dataset: Path, *, split: str) -> list[BeirQuery]:
    relevant: dict[str, dict[str, int]] = defaultdict(dict)
    with qrels_path(dataset, split).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if int(row["score"]) > 0:
                relevant[row["query-id"]][row["corpus-id"]] = int(row["score"])
    queries: list[BeirQuery] = []
    with (dataset / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            query_id = str(record["_id"])
            extra = {k: v for k, v in record.items() if k not in {"_id", "text"}}
            queries.append(BeirQuery(query_id, record["text"], relevant.get(query_id, {}), extra))
    return queries


def corpus_load(*, dataset: Path, collection_name: str, workers: int = 2) -> Collection:
    """Submit every record (unchanged ones are skipped) and let `workers` task workers embed them
    (0: process in this process, without the task queue)."""
    collection = collection_get_or_create(name=collection_name, description=f"BEIR {dataset.name}")
    from apps.corpus.tasks import document_process_task

    inline: list[int] = []
    for record in corpus_records(dataset):
        with transaction.atomic():
            result = document_submit(
                collection=collection,
                filename=record_filename(str(record["_id"])),
                data=record_html(record),
                document_type="beir",
            )
            if result.unchanged:
                continue
            if workers:
                document_process_task.enqueue(result.document.pk)
            else:
                inline.append(result.document.pk)
    for document_id in inline:
        document_process(document_id=document_id)
    if workers:
        _workers_run(workers)
    return collection


def _workers_run(count: int) -> None:
    """Drain the task queue with `count` worker processes (the same path production uses)."""
    command = [
        sys.executable,
        str(Path(settings.BASE_DIR) / "manage.py"),
        "worker",
        "--batch",
        "--no-startup-delay",
    ]
    processes = [subprocess.Popen(command) for _ in range(count)]  # noqa: S603
    for process in processes:
        process.wait()


def collection_pending(collection: Collection) -> int:
    return collection.documents.exclude(status=DocumentStatus.READY).count()


def evaluation_collection_load(*, dataset: Path, workers: int) -> tuple[Collection, int]:
    """The dataset's own collection, loaded through ingestion; also how many documents are
    not ready. Raises FileNotFoundError for a folder that is not in BEIR layout."""
    if not (dataset / "corpus.jsonl").exists():
        raise FileNotFoundError(f"{dataset} has no corpus.jsonl (BEIR layout expected)")
    collection = corpus_load(
        dataset=dataset, collection_name=f"beir:{dataset.name}", workers=workers
    )
    return collection, collection_pending(collection)
