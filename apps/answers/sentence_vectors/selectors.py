"""Reads of stored sentence vectors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db.models import Exists, OuterRef, QuerySet

from apps.answers.composing.vectors import Matrix
from apps.answers.sentence_vectors.models import ChunkSentences, SentenceVector
from apps.corpus.models import Chunk


def sentence_vectors_get(*, model_id: str, hashes: Sequence[str]) -> dict[str, Matrix]:
    """The stored vectors of these text hashes for one model, by hash, in one query."""
    if not hashes:
        return {}
    rows = SentenceVector.objects.filter(
        embedding_model=model_id, text_hash__in=list(set(hashes))
    ).values_list("text_hash", "embedding")
    return {key: np.asarray(vector, dtype=np.float32) for key, vector in rows}


def chunks_unfilled(*, model_id: str, document_id: int | None = None) -> QuerySet[Chunk]:
    """Chunks whose sentence vectors of this model are not stored yet (of one document, or
    all), oldest documents first."""
    filled = ChunkSentences.objects.filter(chunk=OuterRef("pk"), embedding_model=model_id)
    chunks = Chunk.objects.filter(~Exists(filled))
    if document_id is not None:
        chunks = chunks.filter(document_id=document_id)
    return chunks.order_by("document_id", "index")
