"""Stored sentence vectors and which chunk's sentences they are (registered by answers' models)."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from pgvector.django import VectorField

from apps.corpus.models import EMBEDDING_DIMENSIONS, Chunk


class SentenceVector(models.Model):
    """The passage vector of one text the extractive composer scores, by (model, sha256 of the
    text): a text several chunks hold is stored once. Only ever read by its key, never searched
    by distance, so it has no HNSW index."""

    embedding_model = models.CharField(max_length=120)
    text_hash = models.CharField(max_length=64)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    # Last stored or claimed by a chunk's fill: the sweep drops a vector no chunk claims only
    # once this is older than one sweep interval, so a fill under way never loses one.
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["embedding_model", "text_hash"], name="answers_sentence_vector_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.embedding_model} {self.text_hash[:12]}"


class ChunkSentences(models.Model):
    """The texts of a chunk's sentence candidates whose vectors are stored, by hash, for one
    model: the chunk is filled, and these vectors are in use. Deleting the chunk (its document
    deleted or re-ingested) deletes this row; the vectors no row names are the orphans."""

    chunk = models.OneToOneField(
        Chunk, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    embedding_model = models.CharField(max_length=120)
    text_hashes = ArrayField(models.CharField(max_length=64))
    filled_at = models.DateTimeField()

    class Meta:
        indexes = [GinIndex(fields=["text_hashes"], name="answers_chunk_sentences_hashes")]

    def __str__(self) -> str:
        return f"chunk {self.chunk_id}: {len(self.text_hashes)} sentences"
