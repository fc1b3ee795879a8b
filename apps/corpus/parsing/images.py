"""Images (PNG, JPEG, TIFF) via Pillow and Tesseract: each frame of a TIFF is a page.

An image has no text layer, so without OCR (turned off, or a request that must not wait for
it) it has no text at all.
"""

from __future__ import annotations

import io

from PIL import Image, ImageSequence, UnidentifiedImageError

from .blocks import BlockCollector
from .ocr import OcrOptions
from .scans import ScannedPages
from .types import CorruptDocument, DocumentTooLarge, EmptyDocument, Extracted

# Read at call time so deployments and tests can change it, as pdf.MAX_PDF_PAGES.
MAX_IMAGE_PAGES = 2000


def parse_image(data: bytes, *, ocr: OcrOptions | None = None) -> Extracted:
    image = _open(data)  # A damaged image says so even where OCR is off.
    if ocr is None:
        raise EmptyDocument("OCR is turned off, so the text of an image cannot be read")
    collector = BlockCollector()
    scans = ScannedPages(options=ocr)
    try:
        for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
            if number > MAX_IMAGE_PAGES:
                raise DocumentTooLarge(
                    f"The image has more than {MAX_IMAGE_PAGES} pages; split it and upload the parts"
                )
            scans.read(number, collector, _FrameImage(_frame(frame)))
    except (OSError, ValueError, EOFError) as exc:
        # A TIFF can be whole up to some frame and broken after it.
        raise CorruptDocument("The image is damaged and could not be read") from exc
    return Extracted(title=None, blocks=collector.blocks, unread_pages=scans.unread)


def _open(data: bytes) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Image.DecompressionBombError as exc:
        raise DocumentTooLarge("The image is too large to read (too many pixels)") from exc
    except (UnidentifiedImageError, OSError, ValueError, EOFError) as exc:
        raise CorruptDocument("The image is damaged and could not be read") from exc
    return image


class _FrameImage:
    """A frame already in memory, handed to ScannedPages as the page's image."""

    def __init__(self, image: Image.Image) -> None:
        self.image = image

    def __call__(self, options: OcrOptions) -> Image.Image:
        return self.image


def _frame(frame: Image.Image) -> Image.Image:
    copy = frame.copy()  # The iterator reuses one object; OCR needs this frame's pixels.
    copy.load()
    return copy
