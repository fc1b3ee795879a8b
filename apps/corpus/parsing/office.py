"""Office Open XML packages other than Word: PowerPoint (.pptx) via python-pptx and the
shared zip checks (a package that would inflate past the limit is refused, a zip bomb)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable

import pptx
from pptx.shapes.base import BaseShape
from pptx.slide import Slide

from .blocks import BlockCollector, collapse_whitespace
from .types import HEAD_ROW, ROW, CorruptDocument, DocumentTooLarge, Extracted

# Read at call time, as docx.MAX_UNCOMPRESSED_BYTES.
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
MAX_SLIDES = 2000
CELL_SEPARATOR = " | "
SLIDE_LEVEL, NOTES_LEVEL = 1, 2


def package_size_check(data: bytes, *, kind: str) -> None:
    """Refuse a package whose members would unpack past MAX_UNCOMPRESSED_BYTES."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocument(f"The {kind} is damaged and could not be read") from exc
    if total > MAX_UNCOMPRESSED_BYTES:
        raise DocumentTooLarge(f"The {kind} is too large to process once unpacked")


def parse_pptx(data: bytes) -> Extracted:
    package_size_check(data, kind="presentation")
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
    except Exception as exc:
        raise CorruptDocument("The presentation is damaged and could not be read") from exc
    slides = list(presentation.slides)
    if len(slides) > MAX_SLIDES:
        raise DocumentTooLarge(
            f"The presentation has {len(slides)} slides; the limit is {MAX_SLIDES}"
        )
    collector = BlockCollector()
    for number, slide in enumerate(slides, start=1):
        _add_slide(slide, number, collector)
    title = collapse_whitespace(presentation.core_properties.title or "")
    return Extracted(title=title or collector.first_heading(), blocks=collector.blocks)


def _add_slide(slide: Slide, number: int, collector: BlockCollector) -> None:
    """The slide's title is its heading; its other shapes in order; its notes below them."""
    title_shape = slide.shapes.title
    title = collapse_whitespace(title_shape.text_frame.text) if title_shape is not None else ""
    collector.heading(SLIDE_LEVEL, title or f"Slide {number}")
    for shape in _reading_order(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        _add_shape(shape, number, collector)
    notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
    if notes is not None and notes.text.strip():
        collector.heading(NOTES_LEVEL, "Notes")
        for paragraph in notes.paragraphs:
            collector.add("".join(run.text for run in paragraph.runs), page=number)


def _reading_order(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    # Top to bottom, then left to right: the order a person reads a slide in.
    return sorted(shapes, key=lambda s: (s.top or 0, s.left or 0))


def _add_shape(shape: BaseShape, number: int, collector: BlockCollector) -> None:
    if getattr(shape, "has_table", False):
        for i, row in enumerate(shape.table.rows):  # type: ignore[attr-defined]
            cells = [collapse_whitespace(cell.text) for cell in row.cells]
            text = CELL_SEPARATOR.join(cells)
            collector.add(text, page=number, kind=HEAD_ROW if i == 0 else ROW)
    elif getattr(shape, "has_text_frame", False):
        for paragraph in shape.text_frame.paragraphs:  # type: ignore[attr-defined]
            collector.add("".join(run.text for run in paragraph.runs), page=number)
    elif shape.shape_type is not None and hasattr(shape, "shapes"):
        for inner in _reading_order(shape.shapes):  # a group: its members in order
            _add_shape(inner, number, collector)
