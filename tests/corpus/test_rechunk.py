"""Re-chunking stored documents on the real PostgreSQL: old flat chunks become the current
chunker's, only changed text is embedded, documents and old citations survive."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import LazySettings
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from apps.answers.models import Citation
from apps.corpus.ingestion.rechunk import documents_rechunk
from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus
from tests.conftest import CountingEmbedder
from tests.factories import CitationFactory, TurnFactory

pytestmark = pytest.mark.django_db

GUIDE = b"""# Ingestion

## Annual leave

Employees take twenty-six days of annual leave a year. Requests go through the HR portal.

## Supported files

The platform reads these formats:

- PDF files with a text layer
- Word documents in the docx format
- HTML pages saved from a browser
"""


def _flatten_list_chunk(document: Document) -> Chunk:
    """What an older chunker stored: the list run together on one line, another hash."""
    chunk = document.chunks.get(heading__endswith="Supported files")
    chunk.text = " ".join(chunk.text.split())
    chunk.content_hash = "flat-" + chunk.content_hash[5:]
    chunk.save(update_fields=["text", "content_hash"])
    return chunk


@pytest.fixture
def ingested(collection: Collection, embedder: CountingEmbedder) -> Document:
    result = document_submit(collection=collection, filename="ingestion.md", data=GUIDE)
    document_process(document_id=result.document.pk)
    result.document.refresh_from_db()
    assert result.document.status == DocumentStatus.READY, result.document.error_message
    return result.document


def test_flat_chunks_become_the_current_ones_and_only_changed_text_is_embedded(
    ingested: Document,
    embedder: CountingEmbedder,
    settings: LazySettings,
    tmp_path: Path,
    admin_client: Client,
) -> None:
    current = list(ingested.chunks.order_by("index").values_list("text", flat=True))
    prose = ingested.chunks.get(heading__endswith="Annual leave")
    flat = _flatten_list_chunk(ingested)
    turn = TurnFactory.create()
    gone = CitationFactory.create(turn=turn, alias="c1", chunk=flat)
    kept = CitationFactory.create(turn=turn, alias="c2", chunk=prose)
    settings.RAG_EMBEDDING_CACHE_DIR = tmp_path / "empty-cache"  # the model must embed it
    embedded = embedder.passages_embedded

    report = documents_rechunk(collection=ingested.collection)

    assert report.documents == 1 and report.changed == 1 and not report.failed
    assert report.chunks_kept == report.chunks_total - 1 and report.embeddings_computed == 1
    assert embedder.passages_embedded == embedded + 1  # the list chunk only
    document = Document.objects.get(pk=ingested.pk)
    assert document.status == DocumentStatus.READY and document.collection == ingested.collection
    assert list(document.chunks.order_by("index").values_list("text", flat=True)) == current
    assert "\n- Word documents" in document.chunks.get(heading__endswith="Supported files").text
    assert Chunk.objects.filter(pk=prose.pk).exists()  # unchanged: same row, same vector
    # Old answers keep their sources: the dropped chunk's citation keeps its copied snippet.
    gone.refresh_from_db()
    kept.refresh_from_db()
    assert gone.chunk is None and gone.document == document and "PDF files" in gone.snippet
    assert kept.chunk_id == prose.pk
    audit = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk]))
    assert (
        audit.status_code == 200 and "Word documents in the docx format" in audit.content.decode()
    )


def test_a_second_run_changes_nothing_and_a_dry_run_writes_nothing(
    ingested: Document, embedder: CountingEmbedder
) -> None:
    flat = _flatten_list_chunk(ingested)

    dry = documents_rechunk(dry_run=True)
    assert dry.changed == 1 and dry.chunks_total - dry.chunks_kept == 1
    assert Chunk.objects.filter(pk=flat.pk, text=flat.text).exists()  # untouched

    documents_rechunk()
    ids = set(Chunk.objects.values_list("pk", flat=True))
    embedded = embedder.passages_embedded
    again = documents_rechunk()
    assert again.changed == 0 and again.chunks_kept == again.chunks_total
    assert set(Chunk.objects.values_list("pk", flat=True)) == ids
    assert embedder.passages_embedded == embedded


def test_a_missing_original_is_reported_and_the_document_keeps_its_chunks(
    ingested: Document, embedder: CountingEmbedder
) -> None:
    ingested.file.storage.delete(ingested.file.name)
    ids = set(ingested.chunks.values_list("pk", flat=True))

    report = documents_rechunk()

    assert list(report.failed) == [f"{ingested.collection.name}/ingestion.md"]
    ingested.refresh_from_db()
    assert ingested.status == DocumentStatus.READY and ingested.error_message == ""
    assert set(ingested.chunks.values_list("pk", flat=True)) == ids
    assert not Citation.objects.exists()


def test_the_command_rechunks_one_collection_and_refuses_an_unknown_one(
    ingested: Document, embedder: CountingEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    _flatten_list_chunk(ingested)

    call_command("rechunk", "--collection", ingested.collection.name, "--json")

    out = capsys.readouterr().out
    assert '"documents": 1' in out and '"changed": 1' in out
    with pytest.raises(CommandError, match="No collection named"):
        call_command("rechunk", "--collection", "no such collection")
