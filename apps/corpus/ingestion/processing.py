"""Processing a stored document: parse, chunk, embed, and swap in its chunks and search index.

`services.document_process` runs this for one document and records any failure on it; the
keyword index (tsvector, lengths, postings) is rebuilt here too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.corpus.ingestion.chunking import ChunkDraft, chunk_blocks
from apps.corpus.ingestion.signals import chunks_swapped
from apps.corpus.models import Chunk, Document, DocumentStatus
from apps.corpus.parsing import (
    Attachment,
    EmptyDocument,
    OcrOptions,
    ParsedDocument,
    parse_document,
)
from apps.corpus.search.embedders import Embedder
from apps.corpus.search.embedding_cache import EmbeddingCache
from apps.corpus.text import detect_language, search_config_for
from apps.corpus.text.search_form import search_form

# Progress while the pages are read: from the claim's 5% to 15%; embedding takes 80 more.
PARSE_START, PARSE_END = 5, 15


@dataclass(frozen=True)
class ProcessResult:
    document: Document
    chunks_total: int
    chunks_kept: int  # rows reused because their content hash did not change
    embeddings_computed: int
    embeddings_reused: int
    attachments: tuple[Attachment, ...] = ()  # files inside it: submitted as documents of their own
    attached: tuple[int, ...] = ()  # the documents they became, waiting to be processed


def document_index(
    document: Document, embedder: Embedder, on_progress: Callable[[int], None] | None
) -> ProcessResult:
    """Parse, chunk, embed and swap in the new chunks; raises on any failure."""
    with document.file.open("rb") as handle:
        data = handle.read()
    parsed = parse_document(
        filename=document.filename,
        data=data,
        ocr=ocr_options(),
        pdf_table_pages=settings.RAG_PDF_TABLE_MAX_PAGES,
        on_page=_page_progress(document, on_progress),
    )
    drafts = chunk_blocks(
        title=parsed.title,
        blocks=parsed.blocks,
        max_words=settings.RAG_CHUNK_MAX_WORDS,
        overlap_words=settings.RAG_CHUNK_OVERLAP_WORDS,
    )
    if not drafts:
        raise EmptyDocument("No text could be extracted from the file")
    document_status_set(document, DocumentStatus.PROCESSING, progress=PARSE_END)

    def report(done: int) -> None:
        percent = PARSE_END + int(80 * done / max(1, len(drafts)))
        document_status_set(document, DocumentStatus.PROCESSING, progress=percent)
        if on_progress:
            on_progress(percent)

    vectors, computed = _vectors_for(document, drafts, embedder, report)
    kept = _chunks_swap(document, drafts, vectors, embedder.model_id, parsed)
    chunks_swapped.send(sender=Document, document_id=document.pk)
    document.refresh_from_db()
    reused = len(drafts) - computed
    return ProcessResult(
        document, len(drafts), kept, computed, reused, attachments=parsed.attachments
    )


def _page_progress(
    document: Document, on_progress: Callable[[int], None] | None
) -> Callable[[int, int], None]:
    """Reading pages takes progress from 5 to 15 (a long scan's OCR is most of its time),
    written only when the percentage moves: ten writes at most, however many pages."""

    def report(done: int, pages: int) -> None:
        percent = PARSE_START + (PARSE_END - PARSE_START) * done // max(1, pages)
        if percent != document.progress:
            document_status_set(document, DocumentStatus.PROCESSING, progress=percent)
            if on_progress:
                on_progress(percent)

    return report


def _vectors_for(
    document: Document,
    drafts: Sequence[ChunkDraft],
    embedder: Embedder,
    report: Callable[[int], None],
) -> tuple[dict[str, list[float]], int]:
    """Vectors by content hash: from this document's stored chunks, the disk cache, then the model."""
    wanted = {d.content_hash: d.embed_text for d in drafts}
    vectors: dict[str, list[float]] = {
        h: list(v)
        for h, v in Chunk.objects.filter(
            document=document, embedding_model=embedder.model_id, content_hash__in=wanted
        ).values_list("content_hash", "embedding")
    }
    cache = EmbeddingCache(
        directory=settings.RAG_EMBEDDING_CACHE_DIR,
        model_id=embedder.model_id,
        dimensions=embedder.dimensions,
    )
    try:
        missing = [h for h in wanted if h not in vectors]
        vectors.update({h: v.tolist() for h, v in cache.get_many(missing).items()})
        todo = [h for h in wanted if h not in vectors]
        batch = settings.RAG_EMBEDDING_BATCH
        for start in range(0, len(todo), batch):
            hashes = todo[start : start + batch]
            matrix = embedder.embed_passages([wanted[h] for h in hashes])
            fresh = dict(zip(hashes, matrix, strict=True))
            cache.put_many(fresh)
            vectors.update({h: v.tolist() for h, v in fresh.items()})
            report(len(wanted) - len(todo) + start + len(hashes))
    finally:
        cache.close()
    return vectors, len(todo)


def _chunks_swap(
    document: Document,
    drafts: Sequence[ChunkDraft],
    vectors: dict[str, list[float]],
    model_id: str,
    parsed: ParsedDocument,
) -> int:
    """One transaction: keep rows whose content is unchanged, add new ones, drop the rest."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        reusable: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in locked.chunks.filter(embedding_model=model_id).defer("embedding"):
            reusable[chunk.content_hash].append(chunk)
        kept: list[Chunk] = []
        created: list[Chunk] = []
        for draft in drafts:
            pool = reusable.get(draft.content_hash)
            if pool:
                kept.append(_chunk_fill(pool.pop(), draft))
            else:
                created.append(_chunk_fill(Chunk(document=locked), draft))
                created[-1].embedding = vectors[draft.content_hash]
                created[-1].embedding_model = model_id
        kept_ids = [c.pk for c in kept]
        locked.chunks.exclude(pk__in=kept_ids).delete()
        Chunk.objects.bulk_update(kept, _DRAFT_FIELDS)
        Chunk.objects.bulk_create(created, batch_size=500)
        _document_ready(locked, parsed=parsed, chunk_count=len(drafts), drafts=drafts)
        search_vectors_update(locked.pk)
    return len(kept)


_DRAFT_FIELDS = [
    "index",
    "text",
    "heading",
    "page",
    "char_start",
    "char_end",
    "token_count",
    "language",
    "content_hash",
    "search_config",
    "ocr_confidence",
]


def _chunk_fill(chunk: Chunk, draft: ChunkDraft) -> Chunk:
    chunk.index, chunk.text, chunk.heading, chunk.page = (
        draft.index,
        draft.text,
        draft.heading[:500],
        draft.page,
    )
    chunk.char_start, chunk.char_end = draft.char_start, draft.char_end
    chunk.token_count, chunk.language = draft.token_count, draft.language
    chunk.content_hash, chunk.search_config = draft.content_hash, search_config_for(draft.language)
    chunk.ocr_confidence = draft.ocr_confidence
    return chunk


def ocr_options() -> OcrOptions | None:
    """The OCR the settings allow, or None when RAG_OCR is off."""
    if not settings.RAG_OCR:
        return None
    return OcrOptions(
        max_pages=settings.RAG_OCR_MAX_PAGES,
        page_timeout_s=settings.RAG_OCR_PAGE_TIMEOUT_S,
        dpi=settings.RAG_OCR_DPI,
    )


def search_index_rebuild(*, document_ids: Sequence[int]) -> None:
    """Recompute the keyword index (tsvector, lengths, postings) of these documents."""
    for document_id in document_ids:
        with transaction.atomic():
            search_vectors_update(document_id)


def search_vectors_update(document_id: int) -> None:
    """Title and heading weigh more than body text (weight A over B) in keyword ranking. The
    text is indexed in its search form, as queries are searched (`KeywordQuery.from_text`)."""
    chunks = Chunk.objects.filter(document_id=document_id).values_list(
        "pk", "document__title", "heading", "text"
    )
    with connection.cursor() as cursor:
        cursor.executemany(
            """
            UPDATE corpus_chunk SET search_vector =
                setweight(to_tsvector(search_config::regconfig, %s), 'A')
                || setweight(to_tsvector(search_config::regconfig, %s), 'B')
            WHERE id = %s
            """,
            [
                (search_form(f"{title} {heading}"), search_form(text), pk)
                for pk, title, heading, text in chunks
            ],
        )
        # Lexeme occurrences per chunk: the document length in BM25.
        cursor.execute(
            """
            UPDATE corpus_chunk c SET search_length = coalesce(
                (SELECT sum(cardinality(u.positions)) FROM unnest(c.search_vector) u), 0)
            WHERE c.document_id = %s
            """,
            [document_id],
        )
        cursor.execute("DELETE FROM corpus_chunkterm WHERE document_id = %s", [document_id])
        cursor.execute(
            """
            INSERT INTO corpus_chunkterm (chunk_id, document_id, lexeme, config, tf, length)
            SELECT c.id, c.document_id, u.lexeme, c.search_config, cardinality(u.positions),
                   c.search_length
            FROM corpus_chunk c, unnest(c.search_vector) u
            WHERE c.document_id = %s
            """,
            [document_id],
        )


def _document_ready(
    document: Document, *, parsed: ParsedDocument, chunk_count: int, drafts: Sequence[ChunkDraft]
) -> None:
    document.title = parsed.title[:500]
    document.ocr_pages = len({b.page for b in parsed.blocks if b.ocr_confidence is not None})
    document.unread_pages = [{"page": p.page, "reason": p.reason} for p in parsed.unread_pages]
    document.language = detect_language(" ".join(d.text for d in drafts[:20]))
    document.status, document.error_message, document.progress = DocumentStatus.READY, "", 100
    document.lease_expires_at = None
    document.indexed_sha256, document.chunk_count = document.sha256, chunk_count
    document.ingested_at = timezone.now()
    document.save()


def document_status_set(document: Document, status: str, *, progress: int) -> None:
    Document.objects.filter(pk=document.pk).update(
        status=status, progress=progress, updated_at=timezone.now()
    )
    document.status, document.progress = status, progress


def document_fail(document: Document, message: str) -> None:
    Document.objects.filter(pk=document.pk).update(
        status=DocumentStatus.FAILED,
        error_message=message,
        progress=0,
        lease_expires_at=None,
        updated_at=timezone.now(),
    )
    document.refresh_from_db()
