"""`evaluate_documents`: an organisation's own files and questions, through the real product.

The files of a folder go through ingestion into a collection of their own (unchanged files
are kept as they are, so a second run starts asking at once), and each question is asked as
the operator at the command line asks it (`manage.py ask`): a new conversation, the router
deciding the route, retrieval restricted to that collection. The stored turn is then scored
(`document_scores.py`); the turns stay in the audit like any other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from asgiref.sync import async_to_sync
from django.utils import timezone

from apps.answers.conversations.selectors import NotFound
from apps.answers.evaluation.document_questions import DocumentQuestion
from apps.answers.evaluation.document_scores import AskedTurn, QuestionRecord, question_score
from apps.answers.models import Citation, CitationKind, Turn, TurnClient
from apps.answers.turn.entry import turn_events, turn_open
from apps.answers.turn.services import InvalidQuestion
from apps.corpus.ingestion.services import collection_get_or_create, document_process
from apps.corpus.models import Collection, Document, DocumentStatus
from apps.corpus.parsing import SUPPORTED_SUFFIXES
from apps.corpus.uploads.batches import paths_ingest
from ragplatform.db_threads import db_call

SETTLE_POLL_S = 2.0


class DocumentsFolderError(ValueError):
    """The folder cannot be evaluated: missing, without supported files, or ambiguous."""


@dataclass(frozen=True)
class DocumentsLoaded:
    collection: Collection
    files: tuple[str, ...]  # the file names, as questions name them
    processed: int
    unchanged: int
    failed: tuple[tuple[str, str], ...]  # (file name, why) refused or failed in processing
    pending: tuple[str, ...]  # still not ready or failed when the wait ran out
    stale: tuple[str, ...]  # documents of the collection no longer in the folder (still searched)
    seconds: float


def evaluation_files(docs: Path) -> list[Path]:
    """The folder's files of a supported type, recursively. Raises DocumentsFolderError."""
    if not docs.is_dir():
        raise DocumentsFolderError(f"{docs} is not a folder")
    files = sorted(
        p for p in docs.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
    )
    if not files:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise DocumentsFolderError(f"{docs} holds no file of a supported type ({kinds})")
    seen: dict[str, Path] = {}
    for path in files:
        # A document is known by its file name: two of one name would replace each other.
        if (other := seen.setdefault(path.name, path)) is not path:
            raise DocumentsFolderError(f"{other} and {path} have the same file name")
    return files


def evaluation_documents_load(
    *,
    files: Sequence[Path],
    collection_name: str,
    timeout_s: float,
    progress: Callable[[str, str], None] | None = None,
) -> DocumentsLoaded:
    """Ingest `files` into the named collection (processing them in this process, as
    `ingest --wait` does) and wait up to `timeout_s` for every one to be ready or failed."""
    start = time.perf_counter()
    collection = collection_get_or_create(
        name=collection_name, description="Documents of an evaluate_documents run"
    )
    processed = unchanged = 0
    refused: dict[str, str] = {}  # file name -> why ingestion would not take it
    for path in files:
        (outcome,) = paths_ingest(paths=[str(path)], collection=collection, wait=True)
        processed += outcome.action == "processed"
        unchanged += outcome.action == "unchanged"
        if outcome.action == "refused":
            refused[path.name] = outcome.message
        if progress:
            progress(path.name, outcome.action)
    names = tuple(p.name for p in files)
    documents = _documents_settle(collection=collection, names=names, timeout_s=timeout_s)
    return DocumentsLoaded(
        collection=collection,
        files=names,
        processed=processed,
        unchanged=unchanged,
        failed=_failed(names, documents, refused),
        pending=tuple(
            d.filename
            for d in documents
            if d.status not in (DocumentStatus.READY, DocumentStatus.FAILED)
        ),
        stale=tuple(
            collection.documents.exclude(filename__in=names)
            .order_by("filename")
            .values_list("filename", flat=True)
        ),
        seconds=round(time.perf_counter() - start, 1),
    )


def _failed(
    names: Sequence[str], documents: Sequence[Document], refused: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    by_name = {d.filename: d for d in documents if d.status == DocumentStatus.FAILED}
    return tuple(
        (name, refused[name] if name in refused else by_name[name].error_message)
        for name in names
        if name in refused or name in by_name
    )


def _documents_settle(
    *, collection: Collection, names: Sequence[str], timeout_s: float
) -> list[Document]:
    """An unchanged document may still be waiting from an earlier, interrupted run: process
    it here; one a worker is processing right now (its lease alive) is waited for."""
    deadline = time.monotonic() + timeout_s
    while True:
        documents = list(collection.documents.filter(filename__in=names).order_by("filename"))
        waiting = [d for d in documents if d.status in _UNSETTLED]
        if not waiting or time.monotonic() >= deadline:
            return documents
        orphaned = [d for d in waiting if not _lease_alive(d)]
        for document in orphaned:
            document_process(document_id=document.pk)
        if not orphaned:
            time.sleep(SETTLE_POLL_S)


_UNSETTLED = (DocumentStatus.PENDING, DocumentStatus.PROCESSING)


def _lease_alive(document: Document) -> bool:
    lease = document.lease_expires_at
    return (
        document.status == DocumentStatus.PROCESSING
        and lease is not None
        and lease > timezone.now()
    )


def documents_evaluate(
    *,
    questions: Sequence[DocumentQuestion],
    collection_name: str,
    progress: Callable[[int, QuestionRecord], None] | None = None,
) -> list[QuestionRecord]:
    """Ask each question in a new conversation, one after the other, and score its turn."""
    records: list[QuestionRecord] = []
    for done, question in enumerate(questions, start=1):
        asked = async_to_sync(question_ask)(question=question.question, collection=collection_name)
        record = question_score(question=question, asked=asked)
        records.append(record)
        if progress:
            progress(done, record)
    return records


async def question_ask(*, question: str, collection: str) -> AskedTurn:
    """One question as `manage.py ask QUESTION --collection NAME` asks it; its stored turn."""
    start = time.perf_counter()
    try:
        opened = await turn_open(
            user_id=None,
            conversation_id=None,
            question=question,
            collection_names=[collection],
            client=TurnClient.EVALUATION,
        )
    except (InvalidQuestion, NotFound) as exc:  # e.g. longer than RAG_MAX_QUESTION_CHARS
        return AskedTurn(0, "not asked", "", "", "", "", False, None, "", (), str(exc))
    async for _envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
        pass  # stored as it happens: the turn is read back once it has ended
    latency_ms = (time.perf_counter() - start) * 1000
    return await db_call(asked_turn_read)(turn_id=opened.turn.pk, latency_ms=latency_ms)


def asked_turn_read(*, turn_id: int, latency_ms: float) -> AskedTurn:
    turn = Turn.objects.get(pk=turn_id)
    citations = Citation.objects.filter(turn_id=turn_id)
    # Cited sources first, each kind in the order the answer shows them.
    ordered = sorted(citations, key=lambda c: (c.kind != CitationKind.CITED, c.position or 0))
    files = (c.source_file for c in ordered)  # the document's file name, copied at the time
    return AskedTurn(
        turn_id=turn.pk,
        status=turn.status,
        action=turn.action,
        intent=turn.intent,
        strategy=turn.strategy,
        answer=turn.answer,
        refused=turn.refused,
        confidence=turn.confidence,
        band=turn.confidence_band,
        cited_files=tuple(dict.fromkeys(name for name in files if name)),
        error=f"{turn.error_code}: {turn.error_message}" if turn.error_code else "",
        latency_ms=latency_ms,
        refusal_reason=turn.refusal_reason,
        confidence_inputs=turn.confidence_inputs,
    )
