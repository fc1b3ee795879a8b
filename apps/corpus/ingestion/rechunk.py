"""Re-chunking stored documents with the current parser and chunker.

A database filled before chunks kept list items, steps and table rows on their own lines
still holds the old flat chunks; re-uploading every file would be the only other way to get
the new ones. This reads each document's stored original again (through its file field,
wherever the storage keeps it) and swaps in the new chunks the way ingestion does: a chunk
whose text did not change keeps its row and vector, a changed one is embedded again (the
embedding cache answers for any text embedded before), the rest are dropped. The document,
its collection and who may read it do not change. A citation of a dropped chunk keeps its
copied title, file and snippet; only its link to the chunk becomes empty.

A document that cannot be re-chunked (its original is gone, the model is down) keeps its
chunks and stays ready; the failure is reported, not recorded on the document.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import QuerySet

from apps.corpus.ingestion.chunking import chunk_blocks
from apps.corpus.ingestion.processing import document_index, document_status_set, ocr_options
from apps.corpus.models import Collection, Document, DocumentStatus
from apps.corpus.parsing import parse_document
from apps.corpus.search.embedders import Embedder, default_embedder

logger = logging.getLogger(__name__)


@dataclass
class RechunkReport:
    documents: int = 0
    changed: int = 0  # documents whose chunks changed
    chunks_total: int = 0
    chunks_kept: int = 0  # rows reused: same text, same vector
    embeddings_computed: int = 0  # texts the model embedded (not in the cache)
    failed: dict[str, str] = field(default_factory=dict)  # filename -> why

    def as_dict(self) -> dict[str, object]:
        return {
            "documents": self.documents,
            "changed": self.changed,
            "chunks_total": self.chunks_total,
            "chunks_kept": self.chunks_kept,
            "chunks_new": self.chunks_total - self.chunks_kept,
            "embeddings_computed": self.embeddings_computed,
            "failed": self.failed,
        }


def documents_to_rechunk(*, collection: Collection | None = None) -> QuerySet[Document]:
    """Documents that were indexed and are ready, in a stable order."""
    documents = Document.objects.filter(status=DocumentStatus.READY).exclude(indexed_sha256="")
    if collection is not None:
        documents = documents.filter(collection=collection)
    return documents.select_related("collection").order_by("pk")


def documents_rechunk(
    *,
    collection: Collection | None = None,
    embedder: Embedder | None = None,
    dry_run: bool = False,
    on_document: Callable[[Document, str], None] | None = None,
) -> RechunkReport:
    """Re-chunk every ready document (of one collection, or all); `dry_run` only counts the
    chunks that would change. `on_document` hears each document and what happened to it."""
    report = RechunkReport()
    model = embedder or default_embedder()
    for document in documents_to_rechunk(collection=collection).iterator(chunk_size=100):
        report.documents += 1
        try:
            outcome = _rechunk_one(document, model, report, dry_run=dry_run)
        except Exception as exc:  # one bad file must not stop the others
            logger.warning("Re-chunking document %s failed", document.pk, exc_info=True)
            document_status_set(document, DocumentStatus.READY, progress=100)
            report.failed[f"{document.collection.name}/{document.filename}"] = str(exc)[:300]
            outcome = f"failed: {exc}"
        if on_document:
            on_document(document, outcome)
    return report


def _rechunk_one(
    document: Document, embedder: Embedder, report: RechunkReport, *, dry_run: bool
) -> str:
    if dry_run:
        total, kept = _chunks_compared(document, embedder.model_id)
        report.chunks_total += total
        report.chunks_kept += kept
        report.changed += total != kept or total != document.chunks.count()
        return f"{total - kept} of {total} chunks would change"
    before = document.chunk_count
    result = document_index(document, embedder, None)
    report.chunks_total += result.chunks_total
    report.chunks_kept += result.chunks_kept
    report.embeddings_computed += result.embeddings_computed
    changed = result.chunks_kept != result.chunks_total or before != result.chunks_total
    report.changed += changed
    return f"{result.chunks_total - result.chunks_kept} of {result.chunks_total} chunks new"


def _chunks_compared(document: Document, model_id: str) -> tuple[int, int]:
    """(chunks the current chunker makes, how many of them a stored chunk already holds)."""
    with document.file.open("rb") as handle:
        parsed = parse_document(
            filename=document.filename,
            data=handle.read(),
            ocr=ocr_options(),
            pdf_table_pages=settings.RAG_PDF_TABLE_MAX_PAGES,
        )
    drafts = chunk_blocks(
        title=parsed.title,
        blocks=parsed.blocks,
        max_words=settings.RAG_CHUNK_MAX_WORDS,
        overlap_words=settings.RAG_CHUNK_OVERLAP_WORDS,
    )
    stored = list(
        document.chunks.filter(embedding_model=model_id).values_list("content_hash", flat=True)
    )
    kept = 0
    for draft in drafts:
        if draft.content_hash in stored:
            stored.remove(draft.content_hash)
            kept += 1
    return len(drafts), kept
