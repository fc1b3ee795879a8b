"""Writes of stored sentence vectors: chunks filled after ingestion, unused vectors dropped.

Filling takes a batch of chunks with no stored sentences for the embedder's model, claimed
with `FOR NO KEY UPDATE SKIP LOCKED`: several workers take disjoint batches, and a re-ingestion
that swaps these chunks out waits for the batch rather than losing it (keep batches small:
the model runs inside that transaction). Each chunk's candidate texts are the composer's own
(`texts.py`); a text already stored is reused, the rest come from the on-disk embedding cache
(RAG_EMBEDDING_CACHE_DIR, by model and text hash) or the model, and the vectors and the chunks'
rows are stored in the batch's one transaction.

Orphans: deleting a chunk (its document deleted or re-ingested) deletes its `ChunkSentences`
row; a vector no row names any more is an orphan, and the periodic sweep deletes it once it
has gone unclaimed for a sweep interval (`seen_at`). A fill claims the vectors it reuses by
updating their `seen_at` in its transaction, so a sweep running beside it never deletes one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.answers.composing.vectors import Matrix, text_hash
from apps.answers.sentence_vectors.models import ChunkSentences, SentenceVector
from apps.answers.sentence_vectors.selectors import chunks_unfilled
from apps.answers.sentence_vectors.texts import chunk_sentence_texts
from apps.corpus.search.embedders import Embedder
from apps.corpus.search.embedding_cache import EmbeddingCache
from apps.corpus.search.legs import chunks_hydrate


@dataclass(frozen=True)
class FillResult:
    chunks: int = 0
    texts: int = 0  # distinct texts of their sentences
    reused: int = 0  # already stored (another chunk's, or before a re-ingestion)
    cached: int = 0  # read from the on-disk embedding cache
    embedded: int = 0  # computed by the model

    def __add__(self, other: FillResult) -> FillResult:
        return FillResult(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def sentence_vectors_fill(
    *, embedder: Embedder, document_id: int | None = None, batch: int | None = None
) -> FillResult:
    """Fill every chunk still without stored sentence vectors (of one document, or all), a
    batch (RAG_SENTENCE_VECTORS_BATCH chunks) per transaction, until none is left that another
    worker is not filling."""
    total = FillResult()
    while done := sentence_vectors_fill_batch(
        embedder=embedder,
        document_id=document_id,
        limit=batch or settings.RAG_SENTENCE_VECTORS_BATCH,
    ):
        total += done
    return total


def sentence_vectors_fill_batch(
    *, embedder: Embedder, document_id: int | None, limit: int
) -> FillResult | None:
    """One batch; None when no chunk was left to claim."""
    model_id = embedder.model_id
    with transaction.atomic():
        claimed = chunks_unfilled(model_id=model_id, document_id=document_id).select_for_update(
            no_key=True, skip_locked=True
        )
        rows = chunks_hydrate(list(claimed.values_list("pk", flat=True)[:limit]))
        if not rows:
            return None
        texts = {chunk_id: chunk_sentence_texts(row) for chunk_id, row in rows.items()}
        wanted = {text_hash(t): t for chunk_texts in texts.values() for t in chunk_texts}
        now = timezone.now()
        reused = _stored_claimed(model_id, list(wanted), now)
        missing = {key: text for key, text in wanted.items() if key not in reused}
        made, cached = _vectors_made(missing, embedder)
        _vectors_store(model_id, made, now)
        ChunkSentences.objects.bulk_create(
            [
                ChunkSentences(
                    chunk_id=chunk_id,
                    embedding_model=model_id,
                    text_hashes=[text_hash(t) for t in chunk_texts],
                    filled_at=now,
                )
                for chunk_id, chunk_texts in texts.items()
            ],
            update_conflicts=True,  # a row of another model is replaced
            unique_fields=["chunk"],
            update_fields=["embedding_model", "text_hashes", "filled_at"],
        )
    return FillResult(len(rows), len(wanted), len(reused), cached, len(missing) - cached)


def _stored_claimed(model_id: str, hashes: list[str], now: datetime) -> set[str]:
    """The hashes already stored, each claimed (its row updated and so locked until commit)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE answers_sentencevector SET seen_at = %s
            WHERE embedding_model = %s AND text_hash = ANY(%s)
            RETURNING text_hash
            """,
            [now, model_id, hashes],
        )
        return {row[0] for row in cursor.fetchall()}


def _vectors_made(missing: dict[str, str], embedder: Embedder) -> tuple[dict[str, Matrix], int]:
    """Vectors of `missing` (hash -> text): the on-disk cache's, then the model's, in batches;
    and how many the cache had."""
    if not missing:
        return {}, 0
    cache = EmbeddingCache(
        directory=settings.RAG_EMBEDDING_CACHE_DIR,
        model_id=embedder.model_id,
        dimensions=embedder.dimensions,
    )
    try:
        vectors = cache.get_many(missing)
        cached = len(vectors)
        todo = [key for key in missing if key not in vectors]
        size = settings.RAG_EMBEDDING_BATCH
        for start in range(0, len(todo), size):
            keys = todo[start : start + size]
            fresh = dict(
                zip(keys, embedder.embed_passages([missing[k] for k in keys]), strict=True)
            )
            cache.put_many(fresh)
            vectors.update(fresh)
    finally:
        cache.close()
    return vectors, cached


def _vectors_store(model_id: str, vectors: dict[str, Matrix], now: datetime) -> None:
    SentenceVector.objects.bulk_create(
        [
            SentenceVector(embedding_model=model_id, text_hash=key, embedding=vector, seen_at=now)
            for key, vector in vectors.items()
        ],
        batch_size=500,
        # Another worker's batch may have stored the same text meanwhile: claim it instead.
        update_conflicts=True,
        unique_fields=["embedding_model", "text_hash"],
        update_fields=["seen_at"],
    )


def sentence_vectors_orphans_delete(*, unused_before: datetime) -> int:
    """Delete the vectors no chunk's row names and nothing claimed since `unused_before`."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            DELETE FROM answers_sentencevector v
            WHERE v.seen_at < %s AND NOT EXISTS (
                SELECT 1 FROM answers_chunksentences s
                WHERE s.embedding_model = v.embedding_model
                  AND s.text_hashes @> ARRAY[v.text_hash]::varchar(64)[]
            )
            """,
            [unused_before],
        )
        return cursor.rowcount
