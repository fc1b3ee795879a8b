"""Pages read by OCR within one document: the per-document page limit, and a record of every
page that could not be read, so one bad page never costs the rest of the document."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from PIL import Image

from .blocks import BlockCollector
from .ocr import OcrOptions, PageUnreadable, ocr_image, pdf_page_image
from .paragraphs import page_blocks
from .types import UnreadPage

OCR_OFF = "the page has no text layer and OCR is turned off"


class ScannedPages:
    """Reads the pages handed to it, in order, until the document's OCR allowance is spent."""

    def __init__(self, *, options: OcrOptions | None) -> None:
        self.options = options
        self.read_count = 0
        self._unread: list[UnreadPage] = []

    @property
    def unread(self) -> tuple[UnreadPage, ...]:
        return tuple(self._unread)

    def read(
        self,
        number: int,
        collector: BlockCollector,
        image: Callable[[OcrOptions], Image.Image],
        headings: Sequence[tuple[int, str]] = (),
    ) -> None:
        """Page `number`'s paragraphs and commands as blocks marked with its OCR confidence, or
        a record of why not."""
        if self.options is None:
            self._unread.append(UnreadPage(number, OCR_OFF))
            return
        if self.read_count >= self.options.max_pages:
            reason = f"over the limit of {self.options.max_pages} OCR pages per document"
            self._unread.append(UnreadPage(number, reason))
            return
        self.read_count += 1
        try:
            page = ocr_image(image(self.options), options=self.options)
        except PageUnreadable as exc:
            self._unread.append(UnreadPage(number, str(exc)))
            return
        for level, heading in headings:
            collector.heading(level, heading)
        # The same joiner as a PDF's text layer, so a scan is cut into its original's blocks;
        # a heading OCR saw (a block of its own) heads the blocks after it, as in its original.
        printed = dict(page.headings)
        for paragraph, code in page_blocks(page.text):
            mark = None if code else printed.get(paragraph)
            if mark is not None:
                collector.heading(mark.level, mark.title)
            else:
                collector.add_paragraph(
                    paragraph, code=code, page=number, ocr_confidence=page.confidence
                )


class PdfScans(ScannedPages):
    """ScannedPages for a PDF: each page is rendered by pdftoppm from one temporary copy."""

    def __init__(self, *, data: bytes, options: OcrOptions | None) -> None:
        super().__init__(options=options)
        self._data = data
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def read_pdf_page(
        self, number: int, collector: BlockCollector, headings: Sequence[tuple[int, str]]
    ) -> None:
        self.read(number, collector, lambda options: self._render(number, options), headings)

    def _render(self, number: int, options: OcrOptions) -> Image.Image:
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="ocr-")
            (Path(self._folder.name) / "document.pdf").write_bytes(self._data)
        path = Path(self._folder.name) / "document.pdf"
        return pdf_page_image(path, number=number, options=options)

    def close(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()
