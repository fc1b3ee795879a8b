"""Ingesting files in batches: the admin upload, the API upload and `manage.py ingest`.

Each file is submitted on its own (a refused file never stops the others) and its processing
is either run now (`--wait`, tests) or queued for a task worker (`manage.py worker`) once the transaction commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Collection, Document
from apps.corpus.parsing import SUPPORTED_SUFFIXES, DocumentError
from apps.corpus.tasks import document_process_task


@dataclass(frozen=True)
class IncomingFile:
    label: str  # what reports call it (a path, an upload's name)
    filename: str
    read: Callable[[], bytes]


@dataclass(frozen=True)
class IngestOutcome:
    path: str
    document: Document | None
    action: str  # "unchanged", "processed", "queued", "refused"
    message: str = ""
    error: DocumentError | None = None  # why a file was refused (the API answers by its type)


@dataclass(frozen=True)
class UploadSummary:
    """What happened to a batch of uploads, by file name."""

    queued: tuple[str, ...]
    unchanged: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]  # (filename, reason)

    def message(self) -> str:
        parts = [f"{len(self.queued)} queued", f"{len(self.unchanged)} unchanged"]
        if self.refused:
            reasons = "; ".join(f"{name}: {reason}" for name, reason in self.refused)
            parts.append(f"{len(self.refused)} refused: {reasons}")
        return ", ".join(parts)


def document_schedule(*, document: Document, wait: bool) -> None:
    """Process now (`--wait`, tests) or hand the work to a task worker after the commit. Either
    way the attempt count starts again: someone asked for this processing."""
    queued_at = None if wait else timezone.now()
    Document.objects.filter(pk=document.pk).update(attempts=0, queued_at=queued_at)
    document.attempts, document.queued_at = 0, queued_at
    if wait:
        result = document_process(document_id=document.pk)
        for attached in Document.objects.filter(pk__in=result.attached):
            document_schedule(document=attached, wait=True)  # an e-mail's attachments
        document.refresh_from_db()
        return
    transaction.on_commit(lambda: document_process_task.enqueue(document.pk))


def files_ingest(
    *,
    files: Iterable[IncomingFile],
    collection: Collection,
    wait: bool,
    domain: str = "",
    document_type: str = "",
) -> list[IngestOutcome]:
    """Submit each file on its own: a refused file is reported and never stops the others."""
    outcomes: list[IngestOutcome] = []
    for incoming in files:
        try:
            result = document_submit(
                collection=collection,
                filename=incoming.filename,
                data=incoming.read(),
                domain=domain,
                document_type=document_type,
            )
        except DocumentError as exc:
            outcomes.append(IngestOutcome(incoming.label, None, "refused", str(exc), exc))
            continue
        if result.unchanged:
            outcomes.append(IngestOutcome(incoming.label, result.document, "unchanged"))
            continue
        document_schedule(document=result.document, wait=wait)
        doc = result.document
        action = "processed" if wait else "queued"
        outcomes.append(IngestOutcome(incoming.label, doc, action, doc.error_message))
    return outcomes


def upload_incoming(upload: UploadedFile) -> IncomingFile:
    name = upload.name or "unnamed"
    return IncomingFile(name, name, upload.read)


def uploads_ingest(
    *,
    uploads: Sequence[UploadedFile],
    collection: Collection,
    domain: str,
    document_type: str,
    kept: Sequence[IncomingFile] = (),
) -> UploadSummary:
    """Queue uploaded files (and files kept from an earlier try); the summary names what
    happened to each."""
    outcomes = files_ingest(
        files=[*kept, *(upload_incoming(upload) for upload in uploads)],
        collection=collection,
        wait=False,
        domain=domain,
        document_type=document_type,
    )
    return UploadSummary(
        tuple(o.path for o in outcomes if o.action == "queued"),
        tuple(o.path for o in outcomes if o.action == "unchanged"),
        tuple((o.path, o.message) for o in outcomes if o.action == "refused"),
    )


def paths_ingest(
    *, paths: Sequence[str], collection: Collection, wait: bool
) -> list[IngestOutcome]:
    """Ingest files and folders (recursively); in folders, only files of a supported type."""
    files = (IncomingFile(str(p), p.name, p.read_bytes) for p in _expand(Path(p) for p in paths))
    return files_ingest(files=files, collection=collection, wait=wait)


def _expand(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
            )
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"No such file or folder: {path}")
