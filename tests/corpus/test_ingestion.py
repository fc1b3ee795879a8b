"""Ingestion end to end on the real PostgreSQL: statuses, spans, idempotence, atomic swaps."""

from __future__ import annotations

import pytest

from apps.corpus.ingestion.services import (
    FileTooLarge,
    document_process,
    document_submit,
)
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus
from apps.corpus.parsing import UnsupportedFileType
from apps.corpus.text import normalise_text
from tests.conftest import CountingEmbedder
from tests.corpus import files

pytestmark = pytest.mark.django_db

GUIDE = b"""# Leave policy

## Annual leave

Employees take twenty-six days of annual leave a year. Requests go through the HR portal
at least two weeks ahead. Unused days carry over until March.

## Sick leave

Sick leave needs a doctor's note after three days. Managers are told by the portal.
"""


def _ingest(collection: Collection, filename: str, data: bytes) -> Document:
    result = document_submit(collection=collection, filename=filename, data=data)
    document_process(document_id=result.document.pk)
    result.document.refresh_from_db()
    return result.document


def test_markdown_becomes_ready_chunks_with_headings_and_spans(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    document = _ingest(collection, "leave.md", GUIDE)

    assert document.status == DocumentStatus.READY, document.error_message
    assert document.title == "Leave policy"
    assert document.progress == 100 and document.indexed_sha256 == document.sha256
    chunks = list(document.chunks.order_by("index"))
    assert [c.heading for c in chunks] == [
        "Leave policy > Annual leave",
        "Leave policy > Sick leave",
    ]
    assert chunks[0].char_end <= chunks[1].char_start
    assert all(c.embedding_model == embedder.model_id for c in chunks)
    assert all(len(c.embedding) == 384 for c in chunks)
    assert "twenty-six days" in chunks[0].text and chunks[0].token_count > 10


def test_keyword_vector_is_filled_with_language_config(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    _ingest(collection, "leave.md", GUIDE)
    persian = f"# مرخصی\n\n{files.PERSIAN_SENTENCE}\n".encode()
    _ingest(collection, "fa.md", persian)

    english = Chunk.objects.filter(document__filename="leave.md").first()
    farsi = Chunk.objects.get(document__filename="fa.md")
    assert english is not None and english.search_config == "english"
    assert "employe" in str(english.search_vector)  # stemmed by the english configuration
    assert farsi.search_config == "simple" and farsi.language == "fa"
    assert normalise_text(files.PERSIAN_SENTENCE) in farsi.text  # ZWNJ kept


def test_reingesting_unchanged_file_does_nothing(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    document = _ingest(collection, "leave.md", GUIDE)
    ids = set(document.chunks.values_list("pk", flat=True))
    embedded = embedder.passages_embedded

    again = document_submit(collection=collection, filename="leave.md", data=GUIDE)

    assert again.unchanged and again.document.pk == document.pk
    assert set(Chunk.objects.values_list("pk", flat=True)) == ids
    assert embedder.passages_embedded == embedded


def test_changed_file_reembeds_only_changed_chunks_and_keeps_the_rest(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    document = _ingest(collection, "leave.md", GUIDE)
    annual = document.chunks.get(heading__endswith="Annual leave")
    sick = document.chunks.get(heading__endswith="Sick leave")
    before = embedder.passages_embedded

    changed = GUIDE.replace(b"three days", b"five days")
    document = _ingest(collection, "leave.md", changed)

    assert document.status == DocumentStatus.READY
    assert embedder.passages_embedded - before == 1
    assert document.chunks.filter(pk=annual.pk).exists()  # unchanged content keeps its row
    assert not document.chunks.filter(pk=sick.pk).exists()
    assert "five days" in document.chunks.get(heading__endswith="Sick leave").text


def test_embedding_cache_outlives_the_database_rows(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    _ingest(collection, "leave.md", GUIDE)
    Document.objects.all().delete()
    before = embedder.passages_embedded

    document = _ingest(collection, "leave.md", GUIDE)

    assert document.status == DocumentStatus.READY and document.chunk_count == 2
    assert embedder.passages_embedded == before


def test_failure_during_swap_leaves_previous_chunks_intact(
    collection: Collection, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _ingest(collection, "leave.md", GUIDE)
    before = list(document.chunks.order_by("index").values_list("pk", "text"))

    def explode(document_id: int) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr("apps.corpus.ingestion.processing.search_vectors_update", explode)
    document = _ingest(collection, "leave.md", GUIDE + b"\nA new closing paragraph.\n")

    assert document.status == DocumentStatus.FAILED
    assert "server log" in document.error_message
    assert list(document.chunks.order_by("index").values_list("pk", "text")) == before
    assert document.indexed_sha256 != document.sha256


@pytest.mark.parametrize(
    ("filename", "data", "message"),
    [
        ("empty.txt", b"", "empty"),
        ("blank.md", b"   \n\n  ", "empty"),
        ("broken.pdf", files.truncated_pdf(), "PDF"),
        ("locked.pdf", files.encrypted_pdf(user_password="secret"), "password"),
        ("binary.txt", bytes(range(256)) * 8, "binary"),
        ("latin1.txt", "Caf\xe9 cr\xe8me".encode("latin-1"), "UTF-8"),
        ("fake.pdf", b"just some text pretending", "PDF"),
        ("fake.docx", b"not a zip at all", "Word"),
    ],
)
def test_bad_content_fails_with_message_and_leaves_others_untouched(
    collection: Collection, embedder: CountingEmbedder, filename: str, data: bytes, message: str
) -> None:
    good = _ingest(collection, "leave.md", GUIDE)
    good_chunks = list(good.chunks.values_list("pk", flat=True))

    bad = _ingest(collection, filename, data)

    assert bad.status == DocumentStatus.FAILED
    assert message.lower() in bad.error_message.lower(), bad.error_message
    assert bad.chunks.count() == 0
    good.refresh_from_db()
    assert good.status == DocumentStatus.READY
    assert list(good.chunks.values_list("pk", flat=True)) == good_chunks


def test_unsupported_type_and_oversized_files_are_refused_before_storing(
    collection: Collection, settings: object
) -> None:
    with pytest.raises(UnsupportedFileType, match=r"\.exe"):
        document_submit(collection=collection, filename="setup.exe", data=b"MZ\x90\x00")
    settings.RAG_MAX_UPLOAD_BYTES = 10  # type: ignore[attr-defined]
    with pytest.raises(FileTooLarge, match="limit"):
        document_submit(collection=collection, filename="big.txt", data=b"x" * 11)
    assert Document.objects.count() == 0


def test_corrupt_new_version_keeps_the_previous_version_searchable(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    document = _ingest(collection, "report.pdf", files.pdf_bytes([["Quarterly revenue rose."]]))
    assert document.status == DocumentStatus.READY, document.error_message

    document = _ingest(collection, "report.pdf", files.truncated_pdf())

    assert document.status == DocumentStatus.FAILED
    assert document.chunks.count() == 1
    assert "revenue" in document.chunks.get().text


def test_pdf_chunks_carry_page_numbers(collection: Collection, embedder: CountingEmbedder) -> None:
    pdf = files.pdf_bytes(
        [["The first page talks about apples."], ["The second page is on pears."]]
    )
    document = _ingest(collection, "fruit.pdf", pdf)

    assert document.status == DocumentStatus.READY, document.error_message
    pages = dict(document.chunks.values_list("page", "text"))
    assert "apples" in pages[1] and "pears" in pages[2]


def test_docx_ingests(collection: Collection, embedder: CountingEmbedder) -> None:
    document = _ingest(collection, "handbook.docx", files.handbook_docx())
    assert document.status == DocumentStatus.READY, document.error_message
    assert document.chunk_count >= 1
