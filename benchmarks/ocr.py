"""OCR accuracy and speed: character error rate of Tesseract (through the platform's own OCR
path) against the text of the same pages, English and Persian, and pages per minute.

    .venv/bin/python benchmarks/ocr.py [--pdf FILE] [--pages N] [--dpi 200]
        [--persian-corpus CORPUS.jsonl]

English: pages of a real PDF (default: the Shared MIME-info specification Debian ships), each
rendered by pdftoppm at --dpi exactly as a scanned page is, read by `ocr_image`, and compared
with pypdf's text layer of the same page. Persian: the guide's Persian pages (docs/guide/fa-*),
six paragraphs to a printed page, and with --persian-corpus the first N passages of a BEIR
corpus file (title and text, e.g. PersianQA's), each printed to PDF by Chromium, scanned the
same way, and compared with the text Chromium laid
out (the HTML's text: a Chromium PDF's own text layer holds Persian in visual order, which is
no reference). CER = Levenshtein distance / reference length over all pages, both texts
normalised as the platform indexes text (normalise_text) and every run of white space, line
breaks included, made one space: OCR and a text layer need not break lines or paragraphs in the
same places, which is no reading error. The reading measured is the page's lines as Tesseract
read them, before the joiner (paragraphs.py) makes them into paragraphs. Persian sets print a
second figure compared in visual order (both texts laid out right to left by the Unicode
bidirectional algorithm, python-bidi):
where the reading order of a printed page is a convention (a number range "۱۵–۲۰۱۴" is drawn
"2014–15" and typed back so), the logical comparison counts a correct reading as errors and
the visual one does not; a Latin run read in the wrong order still differs in both.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
django.setup()

from bidi import get_display  # noqa: E402
from markdown_it import MarkdownIt  # noqa: E402
from PIL import Image  # noqa: E402
from pypdf import PdfReader  # noqa: E402
from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from apps.corpus.parsing.ocr import OcrOptions, PageUnreadable, ocr_image  # noqa: E402
from apps.corpus.text import normalise_text  # noqa: E402

DEFAULT_PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")
CHROMIUM = "/usr/bin/chromium"


def distance(a: str, b: str) -> int:
    """Levenshtein distance, one row at a time."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def render(pdf: Path, number: int, dpi: int) -> Image.Image:
    command = ["pdftoppm", "-r", str(dpi), "-f", str(number), "-l", str(number), "-gray"]
    done = subprocess.run(  # noqa: S603
        [*command, "-png", "-singlefile", str(pdf)], capture_output=True, check=True
    )
    return Image.open(io.BytesIO(done.stdout))


@dataclass
class Measured:
    cer: float  # in reading (logical) order
    visual_cer: float  # both texts laid out right to left first
    per_minute: float
    unread: int


def comparable(text: str) -> str:
    return " ".join(normalise_text(text).split())


def measure(pages: list[tuple[Image.Image, str]], options: OcrOptions, *, visual: bool) -> Measured:
    """CER (reading and visual order), pages per minute and pages unreadable over the pages."""
    errors = visual_errors = total = unread = 0
    seconds = 0.0  # OCR time only: the distance below is the benchmark's, not the platform's
    for image, reference in pages:
        started = time.perf_counter()
        try:
            read = ocr_image(image, options=options).text
        except PageUnreadable:
            read, unread = "", unread + 1
        seconds += time.perf_counter() - started
        ref, hyp = comparable(reference), comparable(read)
        errors += distance(ref, hyp)
        if visual:
            laid_out = get_display(ref, base_dir="R"), get_display(hyp, base_dir="R")
            visual_errors += distance(*laid_out)
        total += len(ref)
    return Measured(
        cer=errors / max(1, total),
        visual_cer=visual_errors / max(1, total),
        per_minute=len(pages) / max(seconds / 60, 1e-9),
        unread=unread,
    )


def english_pages(pdf: Path, count: int, dpi: int) -> list[tuple[Image.Image, str]]:
    reader = PdfReader(pdf)
    found: list[tuple[Image.Image, str]] = []
    for number, page in enumerate(reader.pages, start=1):
        text = page.extract_text() or ""
        if len(text.strip()) > 200:  # pages with a real text layer to compare with
            found.append((render(pdf, number, dpi), text))
        if len(found) == count:
            break
    return found


def persian_pages(count: int, dpi: int) -> list[tuple[Image.Image, str]]:
    """The guide's Persian pages, six paragraphs (headings and prose) to a printed page."""
    found: list[tuple[Image.Image, str]] = []
    for source in sorted((ROOT / "docs/guide").glob("fa-*.md")):
        body = MarkdownIt("commonmark").render(source.read_text(encoding="utf-8"))
        paragraphs = [node.text() for node in LexborHTMLParser(body).css("h1, h2, p")]
        for start in range(0, len(paragraphs), 6):
            found.append(persian_page(paragraphs[start : start + 6], dpi))
    return found[:count]


def persian_passages(corpus: Path, count: int, dpi: int) -> list[tuple[Image.Image, str]]:
    """The first `count` passages of a BEIR corpus file, title and text, one printed page each."""
    found: list[tuple[Image.Image, str]] = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            found.append(persian_page([record.get("title", ""), record["text"][:1500]], dpi))
            if len(found) == count:
                break
    return found


def persian_page(paragraphs: list[str], dpi: int) -> tuple[Image.Image, str]:
    page = "".join(f"<p>{p}</p>" for p in paragraphs if p)
    pdf = print_pdf(
        f'<html lang="fa" dir="rtl"><meta charset="utf-8"><body style="font-size:16px">{page}'
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.pdf"
        path.write_bytes(pdf)
        return render(path, 1, dpi), " ".join(p for p in paragraphs if p)


def print_pdf(html: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        page, target = Path(folder) / "page.html", Path(folder) / "page.pdf"
        page.write_text(html, encoding="utf-8")
        subprocess.run(  # noqa: S603
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-pdf-header-footer",
                f"--user-data-dir={folder}/profile",
                f"--print-to-pdf={target}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
        return target.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf", type=Path, default=DEFAULT_PDF)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--persian-corpus", type=Path, help="a BEIR corpus.jsonl of Persian text")
    args = parser.parse_args()
    options = OcrOptions(max_pages=10_000, page_timeout_s=300.0, dpi=args.dpi)
    sets = [
        ("English", english_pages(args.pdf, args.pages, args.dpi)),
        ("Persian (guide)", persian_pages(args.pages, args.dpi)),
    ]
    if args.persian_corpus:
        sets.append(
            ("Persian (passages)", persian_passages(args.persian_corpus, args.pages, args.dpi))
        )
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    for name, pages in sets:
        result = measure(pages, options, visual=name != "English")
        visual = f" (visual order {result.visual_cer:.2%})" if name != "English" else ""
        print(
            f"{name}: {len(pages)} pages at {args.dpi} dpi, CER {result.cer:.2%}{visual}, "
            f"{result.per_minute:.1f} pages/min, {result.unread} unreadable"
        )


if __name__ == "__main__":
    main()
