"""Scanned documents made by real tools: pages rendered by poppler's pdftoppm (as a scanner
would see them) and wrapped back into an image-only PDF by Pillow; Persian pages printed to
PDF by Chromium from an HTML page; a photo-like JPEG of text.

The tools are the Debian packages scripts/system-deps.sh installs; a missing one fails the
test with a clear message rather than skipping it.
"""

from __future__ import annotations

import html
import io
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from PIL import Image, ImageFilter

from tests.corpus.files import PERSIAN_HEADING, PERSIAN_SENTENCE

PERSIAN_FOLLOWING = "مدیر درخواست را در پنج روز کاری بررسی می\u200cکند."
CHROMIUM = "/usr/bin/chromium"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: run scripts/system-deps.sh (poppler-utils, chromium)")
    return found


def rendered_pages(pdf: bytes, *, dpi: int = 200) -> list[Image.Image]:
    """Every page of `pdf` as a greyscale image, rendered by pdftoppm."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "source.pdf"
        source.write_bytes(pdf)
        command = [tool("pdftoppm"), "-r", str(dpi), "-gray", "-png", str(source)]
        subprocess.run([*command, str(Path(folder) / "page")], check=True, timeout=120)
        pages = sorted(Path(folder).glob("page-*.png"))
        return [_loaded(path) for path in pages]


def _loaded(path: Path) -> Image.Image:
    image = Image.open(path)
    image.load()
    return image


def image_only_pdf(pages: list[Image.Image], *, dpi: int = 200) -> bytes:
    """The pages wrapped into a PDF holding nothing but their pictures, as a scanner writes."""
    buffer = io.BytesIO()
    first, *rest = [page.convert("L") for page in pages]
    first.save(buffer, format="PDF", save_all=True, append_images=rest, resolution=dpi)
    return buffer.getvalue()


def scanned(pdf: bytes, *, dpi: int = 200) -> bytes:
    """`pdf` as a scanner would return it: the same pages, as pictures only."""
    return image_only_pdf(rendered_pages(pdf, dpi=dpi), dpi=dpi)


def chromium_pdf(html: str) -> bytes:
    """`html` printed to PDF by headless Chromium, as a person would print a page."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing at /usr/bin/chromium: run scripts/system-deps.sh")
    with tempfile.TemporaryDirectory() as folder:
        page, target = Path(folder) / "page.html", Path(folder) / "page.pdf"
        page.write_text(html, encoding="utf-8")
        command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu"]
        options = ["--no-pdf-header-footer", f"--user-data-dir={folder}/profile"]
        subprocess.run(
            [*command, *options, f"--print-to-pdf={target}", page.as_uri()],
            check=True,
            timeout=120,
            capture_output=True,
        )
        return target.read_bytes()


def persian_html() -> str:
    return (
        '<!doctype html><html lang="fa" dir="rtl"><head><meta charset="utf-8">'
        f"<title>{PERSIAN_HEADING}</title></head><body style='font-size:18px'>"
        f"<h1>{PERSIAN_HEADING}</h1><p>{PERSIAN_SENTENCE}</p><p>{PERSIAN_FOLLOWING}</p>"
        "</body></html>"
    )


def photo_jpeg(page: Image.Image) -> bytes:
    """A page as a phone would photograph it: tilted, soft, grey-tinted, JPEG-compressed."""
    tilted = page.convert("L").rotate(1.5, expand=True, fillcolor=235)
    soft = tilted.filter(ImageFilter.GaussianBlur(0.8)).point(lambda v: 30 + v * 0.8)
    buffer = io.BytesIO()
    soft.save(buffer, format="JPEG", quality=70)
    return buffer.getvalue()


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def tiff_bytes(pages: list[Image.Image]) -> bytes:
    buffer = io.BytesIO()
    first, *rest = pages
    first.save(buffer, format="TIFF", save_all=True, append_images=rest, compression="tiff_lzw")
    return buffer.getvalue()


def printed_text_scan(text: str) -> bytes:
    """A text file printed by Chromium with its lines as they stand, then scanned."""
    style = "white-space:pre-wrap;font-size:16px"
    page = f'<meta charset="utf-8"><pre style="{style}">{html.escape(text)}</pre>'
    return scanned(chromium_pdf(page))
