"""Reading a document in the page: one chunk with its neighbours, and the whole text.

The chat's source preview shows a cited chunk and lets the reader step to the chunks around
it; "open document" renders the original's text in the page (never the file itself, which
for HTML could run inside our origin). Every function takes the collections the reader may
read, so a document outside them is answered exactly like one that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.urls import reverse

from apps.corpus.documents.selectors import documents_list
from apps.corpus.models import Chunk, Document
from apps.corpus.parsing import parse_document
from apps.corpus.parsing.types import BLOCK_SEPARATOR, CODE, HEAD_ROW, ITEM, ROW, STEP, Block
from apps.corpus.search.legs import ChunkRow, chunks_hydrate
from apps.corpus.text import normalise_text


@dataclass(frozen=True)
class ChunkView:
    """A chunk as the preview shows it, with whether there is one before and after it."""

    index: int
    text: str
    heading: str
    page: int | None
    has_previous: bool
    has_next: bool
    ocr_confidence: float | None  # the page was read by OCR, with this confidence (0-100)


@dataclass(frozen=True)
class ReadBlock:
    """One paragraph, list item or table row of the rendered document."""

    text: str
    kind: str  # "text", "item", "row" or "code": how the page lays it out
    heading: str
    page: int | None
    cited: bool  # inside the chunk the reader came from


_LAYOUT = {ITEM: "item", STEP: "item", ROW: "row", HEAD_ROW: "row", CODE: "code"}


def document_readable_get(*, document_id: int, readable: frozenset[int] | None) -> Document:
    """The document if its collection is among `readable` (None: all); Document.DoesNotExist
    otherwise, the same answer as for a document that does not exist."""
    documents: QuerySet[Document] = documents_list(collection_ids=readable)
    return documents.get(pk=document_id)


def chunk_view_get(*, document: Document, index: int) -> ChunkView | None:
    chunk = (
        Chunk.objects.filter(document=document, index=index)
        .only("index", "text", "heading", "page", "ocr_confidence")
        .first()
    )
    if chunk is None:
        return None
    around = set(
        Chunk.objects.filter(document=document, index__in=(index - 1, index + 1)).values_list(
            "index", flat=True
        )
    )
    return ChunkView(
        index=chunk.index,
        text=chunk.text,
        heading=chunk.heading,
        page=chunk.page,
        has_previous=index - 1 in around,
        has_next=index + 1 in around,
        ocr_confidence=chunk.ocr_confidence,
    )


def chunks_around(*, chunk_ids: Sequence[int], reach: int) -> list[ChunkRow]:
    """The chunks at most `reach` places before or after each given chunk in its document,
    nearest first (the given chunks themselves left out): the sections beside a cited one."""
    places = list(Chunk.objects.filter(pk__in=chunk_ids).values_list("document_id", "index"))
    given = set(chunk_ids)
    wanted = [
        (document, index + step * sign)
        for step in range(1, reach + 1)
        for document, index in places
        for sign in (1, -1)
    ]
    if not wanted:
        return []
    near = Q()
    for document, index in wanted:
        near |= Q(document_id=document, index=index)
    found = {
        (document, index): pk
        for pk, document, index in Chunk.objects.filter(near).values_list(
            "pk", "document_id", "index"
        )
    }
    order = [found[w] for w in wanted if w in found and found[w] not in given]
    rows = chunks_hydrate(list(dict.fromkeys(order)))
    return [rows[pk] for pk in dict.fromkeys(order) if pk in rows]


def document_blocks_read(*, document: Document, cited_chunk: int | None = None) -> list[ReadBlock]:
    """The original's text, block by block, parsed again from the stored file (so Markdown and
    HTML arrive as plain text). Blocks that overlap the chunk `cited_chunk` are marked. Pages
    read by OCR are not read again in a request: their text comes from the stored chunks.

    Raises OSError or ValueError when the file is gone, DocumentError when it no longer parses.
    """
    if document.ocr_pages:
        return _blocks_with_scans(document, cited_chunk)
    with document.file.open("rb") as handle:
        parsed = parse_document(filename=document.filename, data=handle.read())
    return _blocks_of(parsed.blocks, _chunk_span(document, cited_chunk))


def _blocks_of(parsed: Sequence[Block], span: tuple[int, int] | None) -> list[ReadBlock]:
    blocks: list[ReadBlock] = []
    offset = 0
    # The offsets are those chunking gave its chunks: normalised blocks, empty ones skipped.
    for block in parsed:
        text = normalise_text(block.text)
        if not text:
            continue
        end = offset + len(text)
        cited = span is not None and offset < span[1] and end > span[0]
        blocks.append(_read_block(block, text, cited=cited))
        offset = end + len(BLOCK_SEPARATOR)
    return blocks


def _blocks_with_scans(document: Document, cited_chunk: int | None) -> list[ReadBlock]:
    """The stored chunks in order: those of a document with scanned pages hold its only text."""
    chunks = Chunk.objects.filter(document=document).only("index", "text", "heading", "page")
    return [
        ReadBlock(
            text=c.text, kind="text", heading=c.heading, page=c.page, cited=c.index == cited_chunk
        )
        for c in chunks.order_by("index")
    ]


def _chunk_span(document: Document, index: int | None) -> tuple[int, int] | None:
    if index is None:
        return None
    found = Chunk.objects.filter(document=document, index=index).values_list(
        "char_start", "char_end"
    )
    return next(iter(found), None)


def _read_block(block: Block, text: str, *, cited: bool) -> ReadBlock:
    return ReadBlock(
        text=text,
        kind=_LAYOUT.get(block.kind, "text"),
        heading=block.heading or "",
        page=block.page,
        cited=cited,
    )


def chunk_payload(*, document: Document, chunk: ChunkView) -> dict[str, object]:
    """What the preview panel needs of a chunk: its text and place, and where to go next."""

    def chunk_url(index: int) -> str:
        return reverse("document-chunk", args=[document.pk, index])

    return {
        "index": chunk.index,
        "text": chunk.text,
        "heading": chunk.heading,
        "page": chunk.page,
        "ocr_confidence": chunk.ocr_confidence,
        "previous_url": chunk_url(chunk.index - 1) if chunk.has_previous else None,
        "next_url": chunk_url(chunk.index + 1) if chunk.has_next else None,
        "read_url": f"{reverse('document-read', args=[document.pk])}?chunk={chunk.index}#cited",
    }
