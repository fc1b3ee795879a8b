"""What searching PDF pages for tables costs: the platform's PDF parser on real multi-page
PDFs, once with table search off (pypdf's text only) and once with the first --pages pages
searched (pdfplumber), seconds per page for each and the table rows found.

    .venv/bin/python benchmarks/pdf_tables.py [--pages 100] [PDF ...]

Default PDFs: manuals Debian ships under /usr/share/doc (Bash's reference, the Shared
MIME-info specification). The figure sets RAG_PDF_TABLE_MAX_PAGES: the extra seconds a
document's first pages cost on a task worker.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apps.corpus.parsing.pdf import parse_pdf  # noqa: E402
from apps.corpus.parsing.types import HEAD_ROW, ROW  # noqa: E402

DEFAULT_PDFS = (
    Path("/usr/share/doc/bash/bashref.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
)


def timed(data: bytes, *, table_pages: int) -> tuple[float, int, int]:
    """(seconds, pages with blocks, table rows) for one parse."""
    started = time.perf_counter()
    extracted = parse_pdf(data, ocr=None, table_pages=table_pages)
    seconds = time.perf_counter() - started
    pages = len({b.page for b in extracted.blocks})
    rows = sum(b.kind in (HEAD_ROW, ROW) for b in extracted.blocks)
    return seconds, pages, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdfs", nargs="*", type=Path, default=list(DEFAULT_PDFS))
    parser.add_argument("--pages", type=int, default=100, help="pages searched for tables")
    args = parser.parse_args()
    for pdf in args.pdfs:
        data = pdf.read_bytes()
        plain_s, pages, _ = timed(data, table_pages=0)
        tables_s, _, rows = timed(data, table_pages=args.pages)
        searched = min(pages, args.pages)
        extra = (tables_s - plain_s) / max(searched, 1)
        print(
            f"{pdf.name}: {pages} pages; plain {plain_s:.2f}s ({plain_s / pages * 1000:.0f} ms/page); "
            f"tables on {searched} pages {tables_s:.2f}s (+{extra * 1000:.0f} ms/page searched); "
            f"{rows} table rows"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
