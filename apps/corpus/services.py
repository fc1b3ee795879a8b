"""Writes for the corpus: submitting documents and turning them into searchable chunks."""

from __future__ import annotations

import hashlib
import logging
import mimetypes
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.utils import timezone

from apps.corpus.chunking import ChunkDraft, chunk_blocks
from apps.corpus.embedders import Embedder, EmbedderError, default_embedder
from apps.corpus.embedding_cache import EmbeddingCache
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus
from apps.corpus.parsing import (
    DocumentError,
    EmptyDocument,
    UnsupportedFileType,
    detect_mime_type,
    parse_document,
)
from apps.corpus.text import detect_language, search_config_for

logger = logging.getLogger(__name__)


class FileTooLarge(DocumentError):
    """Refused before storing: the upload exceeds RAG_MAX_UPLOAD_BYTES."""


@dataclass(frozen=True)
class SubmitResult:
    document: Document
    created: bool
    unchanged: bool  # same bytes as the version already stored: nothing to do


@dataclass(frozen=True)
class ProcessResult:
    document: Document
    chunks_total: int
    chunks_kept: int  # rows reused because their content hash did not change
    embeddings_computed: int
    embeddings_reused: int


def collection_get_or_create(*, name: str, description: str = "") -> Collection:
    collection, _ = Collection.objects.get_or_create(
        name=name, defaults={"description": description}
    )
    return collection


def document_submit(
    *,
    collection: Collection,
    filename: str,
    data: bytes,
    domain: str = "",
    document_type: str = "",
) -> SubmitResult:
    """Validate type and size, store the file, and mark the document pending.

    Raises UnsupportedFileType or FileTooLarge (the caller answers 4xx); every other
    problem with the content is found by document_process and recorded on the document.
    """
    filename = filename.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].strip() or "unnamed"
    if len(data) > settings.RAG_MAX_UPLOAD_BYTES:
        raise FileTooLarge(
            f"The file is {len(data):,} bytes; the limit is {settings.RAG_MAX_UPLOAD_BYTES:,} bytes"
        )
    mime_type = _mime_type(filename, data)
    sha256 = hashlib.sha256(data).hexdigest()
    existing = Document.objects.filter(collection=collection, filename=filename).first()
    if existing and existing.sha256 == sha256 and existing.status != DocumentStatus.FAILED:
        return SubmitResult(document=existing, created=False, unchanged=True)
    document = existing or Document(collection=collection, filename=filename)
    document.sha256, document.size_bytes, document.mime_type = sha256, len(data), mime_type
    document.domain = domain or document.domain
    document.document_type = document_type or document.document_type
    document.status, document.error_message, document.progress = DocumentStatus.PENDING, "", 0
    document.file.save(filename, ContentFile(data), save=False)
    document.save()
    return SubmitResult(document=document, created=existing is None, unchanged=False)


def _mime_type(filename: str, data: bytes) -> str:
    try:
        return detect_mime_type(filename=filename, data=data)
    except UnsupportedFileType:
        raise
    except DocumentError:
        # Known extension, wrong content: accept it so processing records a clear failure.
        return mimetypes.guess_type(filename)[0] or "application/octet-stream"


def document_process(
    *,
    document_id: int,
    embedder: Embedder | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> ProcessResult:
    """Parse, chunk, embed and swap in the new chunks; a failure leaves stored chunks as they were."""
    document = Document.objects.get(pk=document_id)
    _status_set(document, DocumentStatus.PROCESSING, progress=5)
    try:
        return _process(document, embedder or default_embedder(), on_progress)
    except DocumentError as exc:
        _fail(document, str(exc))
    except EmbedderError as exc:
        _fail(document, f"The embedding model could not be reached; try again later. ({exc})")
    except Exception:
        logger.exception("Ingestion of document %s failed unexpectedly", document.pk)
        _fail(document, "Processing failed unexpectedly; the server log has the details.")
    return ProcessResult(document, document.chunk_count, 0, 0, 0)


def _process(
    document: Document, embedder: Embedder, on_progress: Callable[[int], None] | None
) -> ProcessResult:
    with document.file.open("rb") as handle:
        data = handle.read()
    parsed = parse_document(filename=document.filename, data=data)
    drafts = chunk_blocks(
        title=parsed.title,
        blocks=parsed.blocks,
        max_words=settings.RAG_CHUNK_MAX_WORDS,
        overlap_words=settings.RAG_CHUNK_OVERLAP_WORDS,
    )
    if not drafts:
        raise EmptyDocument("No text could be extracted from the file")
    _status_set(document, DocumentStatus.PROCESSING, progress=15)

    def report(done: int) -> None:
        percent = 15 + int(80 * done / max(1, len(drafts)))
        _status_set(document, DocumentStatus.PROCESSING, progress=percent)
        if on_progress:
            on_progress(percent)

    vectors, computed = _vectors_for(document, drafts, embedder, report)
    kept = _chunks_swap(document, drafts, vectors, embedder.model_id, parsed.title)
    document.refresh_from_db()
    return ProcessResult(document, len(drafts), kept, computed, len(drafts) - computed)


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
    title: str,
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
        _document_ready(locked, title=title, chunk_count=len(drafts), drafts=drafts)
        _search_vectors_update(locked.pk)
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
    return chunk


def search_index_rebuild(*, document_ids: Sequence[int]) -> None:
    """Recompute the keyword index (tsvector, lengths, postings) of these documents."""
    for document_id in document_ids:
        with transaction.atomic():
            _search_vectors_update(document_id)


def _search_vectors_update(document_id: int) -> None:
    """Title and heading weigh more than body text (weight A over B) in keyword ranking."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE corpus_chunk c SET search_vector =
                setweight(to_tsvector(c.search_config::regconfig, d.title || ' ' || c.heading), 'A')
                || setweight(to_tsvector(c.search_config::regconfig, c.text), 'B')
            FROM corpus_document d
            WHERE d.id = c.document_id AND d.id = %s
            """,
            [document_id],
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
    document: Document, *, title: str, chunk_count: int, drafts: Sequence[ChunkDraft]
) -> None:
    document.title = title[:500]
    document.language = detect_language(" ".join(d.text for d in drafts[:20]))
    document.status, document.error_message, document.progress = DocumentStatus.READY, "", 100
    document.indexed_sha256, document.chunk_count = document.sha256, chunk_count
    document.ingested_at = timezone.now()
    document.save()


def _status_set(document: Document, status: str, *, progress: int) -> None:
    Document.objects.filter(pk=document.pk).update(
        status=status, progress=progress, updated_at=timezone.now()
    )
    document.status, document.progress = status, progress


def _fail(document: Document, message: str) -> None:
    Document.objects.filter(pk=document.pk).update(
        status=DocumentStatus.FAILED, error_message=message, progress=0, updated_at=timezone.now()
    )
    document.refresh_from_db()


SUPPORTED_SUFFIXES = frozenset(
    {".pdf", ".docx", ".html", ".htm", ".md", ".markdown", ".txt", ".text"}
)


@dataclass(frozen=True)
class IngestOutcome:
    path: str
    document: Document | None
    action: str  # "unchanged", "processed", "queued", "refused"
    message: str = ""


def document_schedule(*, document: Document, wait: bool) -> None:
    """Process now (`--wait`, tests) or hand the work to a db_worker after the commit."""
    if wait:
        document_process(document_id=document.pk)
        document.refresh_from_db()
        return
    from apps.corpus.tasks import document_process_task

    transaction.on_commit(lambda: document_process_task.enqueue(document.pk))


@dataclass(frozen=True)
class IncomingFile:
    label: str  # what reports call it (a path, an upload's name)
    filename: str
    read: Callable[[], bytes]


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
            outcomes.append(IngestOutcome(incoming.label, None, "refused", str(exc)))
            continue
        if result.unchanged:
            outcomes.append(IngestOutcome(incoming.label, result.document, "unchanged"))
            continue
        document_schedule(document=result.document, wait=wait)
        doc = result.document
        action = "processed" if wait else "queued"
        outcomes.append(IngestOutcome(incoming.label, doc, action, doc.error_message))
    return outcomes


def paths_ingest(
    *, paths: Sequence[str], collection: Collection, wait: bool
) -> list[IngestOutcome]:
    """Ingest files and folders (recursively)."""
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
