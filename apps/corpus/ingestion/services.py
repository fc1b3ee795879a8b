"""Writes for the corpus: submitting a document, then processing it into searchable chunks.

Submitting validates and stores the file; processing (in `processing.py`) parses, chunks and
embeds it, here wrapped so that every failure is recorded on the document. Ingesting several
files and scheduling their processing is in `uploads/batches.py`.
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files.base import ContentFile
from django.db import transaction

from apps.corpus.documents.originals import original_discard_on_commit
from apps.corpus.ingestion.leases import document_claim, document_lease_kept
from apps.corpus.ingestion.processing import ProcessResult, document_fail, document_index
from apps.corpus.models import Collection, Document, DocumentStatus
from apps.corpus.parsing import DocumentError, UnsupportedFileType, detect_mime_type
from apps.corpus.parsing.detect import filename_stem
from apps.corpus.search.embedders import Embedder, EmbedderError, default_embedder

logger = logging.getLogger(__name__)


class FileTooLarge(DocumentError):
    """Refused before storing: the upload exceeds RAG_MAX_UPLOAD_BYTES."""


@dataclass(frozen=True)
class SubmitResult:
    document: Document
    created: bool
    unchanged: bool  # same bytes as the version already stored: nothing to do


def collection_get_or_create(
    *, name: str, description: str = "", public: bool = False
) -> Collection:
    """The named collection, created private unless `public`; `public` also opens an existing
    one (the operator's `ingest --public`), but never closes one."""
    collection, _ = Collection.objects.get_or_create(
        name=name, defaults={"description": description, "public": public}
    )
    if public and not collection.public:
        Collection.objects.filter(pk=collection.pk).update(public=True)
        collection.public = True
    return collection


def collection_create(*, name: str, writer_groups: Sequence[Group] = ()) -> Collection:
    """A new private collection, writable by `writer_groups`."""
    with transaction.atomic():
        collection = Collection.objects.create(name=name)
        collection.writer_groups.set(writer_groups)
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
    superseded = existing.file.name if existing and existing.file else ""
    document.file.save(filename, ContentFile(data), save=False)
    document.save()
    if superseded != document.file.name:
        original_discard_on_commit(name=superseded or "")
    return SubmitResult(document=document, created=existing is None, unchanged=False)


def _mime_type(filename: str, data: bytes) -> str:
    try:
        return detect_mime_type(filename=filename, data=data)
    except UnsupportedFileType:
        raise
    except DocumentError:
        # Known extension, wrong content: accept it so processing records a clear failure.
        return mimetypes.guess_type(filename)[0] or "application/octet-stream"


def attachments_submit(*, document: Document, result: ProcessResult) -> tuple[int, ...]:
    """Each attachment of `document` stored as a pending document of the same collection, named
    after both ("Offer - terms.pdf"); a refused one (a .zip, too large) is recorded on the
    message with the reason, and never fails the message itself."""
    attached: list[int] = []
    refused: list[dict[str, object]] = []
    for attachment in result.attachments:
        name = f"{filename_stem(document.filename)} - {attachment.filename}"
        try:
            submitted = document_submit(
                collection=document.collection, filename=name, data=attachment.data
            )
        except DocumentError as exc:
            refused.append({"page": None, "reason": f"attachment {attachment.filename}: {exc}"})
            continue
        if not submitted.unchanged:
            attached.append(submitted.document.pk)
    if refused:
        document.unread_pages = [*document.unread_pages, *refused]
        Document.objects.filter(pk=document.pk).update(unread_pages=document.unread_pages)
    return tuple(attached)


def document_process(
    *,
    document_id: int,
    embedder: Embedder | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> ProcessResult:
    """Parse, chunk, embed and swap in the new chunks; a failure leaves stored chunks as they were."""
    document_claim(document_id=document_id)
    document = Document.objects.get(pk=document_id)
    try:
        with document_lease_kept(document_id=document_id):
            result = document_index(document, embedder or default_embedder(), on_progress)
        return replace(result, attached=attachments_submit(document=result.document, result=result))
    except DocumentError as exc:
        document_fail(document, str(exc))
    except FileNotFoundError:
        document_fail(document, "The original file is missing from storage; upload it again.")
    except EmbedderError as exc:
        document_fail(
            document, f"The embedding model could not be reached; try again later. ({exc})"
        )
    except Exception:
        logger.exception("Ingestion of document %s failed unexpectedly", document.pk)
        document_fail(document, "Processing failed unexpectedly; the server log has the details.")
    return ProcessResult(document, document.chunk_count, 0, 0, 0)
