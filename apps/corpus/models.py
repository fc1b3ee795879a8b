"""Documents and their searchable chunks."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from pgvector.django import HnswIndex, VectorField

EMBEDDING_DIMENSIONS = 384


class Collection(models.Model):
    """A named set of documents, and who may read and write it (rules in `access.py`)."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    # New collections are private until an admin opens them up: nobody reads a collection
    # by accident.
    public = models.BooleanField(
        default=False, help_text="Readable by every signed-in user, whatever their groups."
    )
    reader_groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="readable_collections",
        help_text="Members may ask about, search and open this collection's documents.",
    )
    writer_groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="writable_collections",
        help_text=(
            "Members may also read, and those allowed to change documents may upload, "
            "replace and delete this collection's documents."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class DocumentStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PROCESSING = "processing", "Processing"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


def document_upload_path(instance: Document, filename: str) -> str:
    return f"documents/{instance.sha256[:2]}/{instance.sha256}/{filename}"


class Document(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=500, blank=True)
    # Identity inside a collection: re-ingesting the same name updates this row.
    filename = models.CharField(max_length=500)
    file = models.FileField(upload_to=document_upload_path, max_length=700)
    mime_type = models.CharField(max_length=120)
    sha256 = models.CharField(max_length=64)
    size_bytes = models.PositiveBigIntegerField()
    language = models.CharField(max_length=8, blank=True)
    domain = models.CharField(max_length=100, blank=True)
    document_type = models.CharField(max_length=100, blank=True)
    status = models.CharField(
        max_length=12, choices=DocumentStatus.choices, default=DocumentStatus.PENDING
    )
    error_message = models.TextField(blank=True)
    progress = models.PositiveSmallIntegerField(default=0)
    # sha256 of the version whose chunks are stored; differs from sha256 while a new
    # version is processing or after it failed (the previous chunks stay searchable).
    indexed_sha256 = models.CharField(max_length=64, blank=True)
    chunk_count = models.PositiveIntegerField(default=0)
    # Pages read by OCR, and pages left out with the reason ([{"page": 3, "reason": "..."}]):
    # one unreadable page is recorded here while the rest of the document is kept.
    ocr_pages = models.PositiveIntegerField(default=0)
    unread_pages = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    ingested_at = models.DateTimeField(null=True, blank=True)
    # When processing was last queued and not yet started (None once a worker claims it).
    queued_at = models.DateTimeField(null=True, blank=True)
    # While processing: the worker renews this; once past, the worker is taken to be dead.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Processing attempts since the last upload or re-process request.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "filename"], name="corpus_document_unique_filename"
            ),
            models.CheckConstraint(
                condition=Q(progress__lte=100), name="corpus_document_progress_percent"
            ),
            models.CheckConstraint(
                condition=Q(status__in=DocumentStatus.values), name="corpus_document_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=DocumentStatus.FAILED) | ~Q(error_message=""),
                name="corpus_document_failed_has_message",
            ),
        ]
        indexes = [models.Index(fields=["status"], name="corpus_doc_status_idx")]

    def __str__(self) -> str:
        return self.title or self.filename


def kept_upload_path(instance: KeptUpload, filename: str) -> str:
    return f"kept-uploads/{instance.token}/{filename}"


class KeptUpload(models.Model):
    """A file chosen on the admin upload form whose submission had an error: browsers cannot
    fill a file input again, so the file waits here for the next submission (by the same user)."""

    token = models.UUIDField(unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="kept_uploads"
    )
    filename = models.CharField(max_length=500)
    file = models.FileField(upload_to=kept_upload_path, max_length=700)
    size_bytes = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.filename


class Chunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    text = models.TextField()
    heading = models.CharField(max_length=500, blank=True)
    page = models.PositiveIntegerField(null=True, blank=True)
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField()
    language = models.CharField(max_length=8)
    content_hash = models.CharField(max_length=64)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    embedding_model = models.CharField(max_length=120)
    # regconfig name used for search_vector: 'english' or 'simple' (Persian).
    search_config = models.CharField(max_length=20)
    search_vector = SearchVectorField(null=True)
    search_length = models.PositiveIntegerField(default=0)  # lexeme occurrences, for BM25
    # The mean word confidence (0-100) of the page this chunk was read from by OCR; null for
    # text taken from the file's own text layer.
    ocr_confidence = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["document_id", "index"]
        constraints = [
            # Deferred: re-ingestion renumbers kept chunks inside one transaction.
            models.UniqueConstraint(
                fields=["document", "index"],
                name="corpus_chunk_unique_index",
                deferrable=models.Deferrable.DEFERRED,
            ),
            models.CheckConstraint(
                condition=Q(char_end__gte=models.F("char_start")), name="corpus_chunk_span_ordered"
            ),
            models.CheckConstraint(
                condition=Q(search_config__in=["english", "simple"]),
                name="corpus_chunk_search_config_known",
            ),
        ]
        indexes = [
            HnswIndex(
                name="corpus_chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="corpus_chunk_search_gin"),
            models.Index(fields=["content_hash"], name="corpus_chunk_hash_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.index}"


class ChunkTerm(models.Model):
    """Postings of the keyword index: how often each lexeme occurs in each chunk.

    Filled from the chunk's tsvector at ingestion, so BM25 reads term and document
    frequencies for just the query's lexemes. The chunk's document, text-search config and
    length are copied here (rewritten with the chunk) so scoring needs no join per posting.
    """

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="terms")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    lexeme = models.CharField(max_length=255)
    config = models.CharField(max_length=20)  # the chunk's search_config
    tf = models.PositiveIntegerField()
    length = models.PositiveIntegerField()  # the chunk's search_length

    class Meta:
        indexes = [
            models.Index(
                fields=["lexeme"],
                include=["chunk", "document", "config", "tf", "length"],
                name="corpus_chunkterm_postings",
            )
        ]
        constraints = [
            models.UniqueConstraint(fields=["chunk", "lexeme"], name="corpus_chunkterm_once"),
        ]

    def __str__(self) -> str:
        return f"{self.lexeme} x{self.tf} in chunk {self.chunk_id}"
