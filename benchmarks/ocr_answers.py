"""Answers over a scanned copy against answers over the original: the same questions asked,
through the full turn path, of a folder of PDFs and of the same PDFs scanned.

    .venv/bin/python benchmarks/ocr_answers.py --docs .data/real-docs \
        --questions benchmarks/data/real_docs/questions.jsonl [--dpi 200] [--work DIR]
        [--max-pages 20]

Takes the documents of DOCS and the questions whose files are among them, and writes a copy
of each as a scanner returns its paper copy: a PDF as it is, a text, Markdown or HTML file as
Chromium prints it (text and Markdown as their plain lines, HTML as the page); every page
rendered by pdftoppm at --dpi, greyscale, wrapped back into an image-only PDF by Pillow. A
document whose paper copy is longer than --max-pages is left out of both runs (OCR reads a few
pages a minute on two cores). Then `manage.py evaluate_documents` runs on the originals and on
the scans (OCR reads the scans on ingestion; a scan of `notes.txt` is `notes.pdf`, its
questions' files renamed so), and each run's share of correct answers and the difference are
printed, with the questions whose verdict differs. Target (issue #26): the scanned copy
answers as often correctly as the original, within 0.05.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.05


CHROMIUM = "/usr/bin/chromium"
PRINTED = {".txt", ".md", ".html", ".htm"}


def scanned(pdf: Path, *, dpi: int) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        command = ["pdftoppm", "-r", str(dpi), "-gray", "-png", str(pdf), f"{folder}/page"]
        subprocess.run(command, check=True, timeout=1800)  # noqa: S603
        pages = [Image.open(path) for path in sorted(Path(folder).glob("page-*.png"))]
        buffer = io.BytesIO()
        first, *rest = [page.convert("L") for page in pages]
        first.save(buffer, format="PDF", save_all=True, append_images=rest, resolution=dpi)
        return buffer.getvalue()


def paper_copy(document: Path, folder: Path) -> Path:
    """The PDF a person prints of `document`: a PDF itself; the rest printed by Chromium."""
    if document.suffix.lower() == ".pdf":
        return document
    page = document
    if document.suffix.lower() in {".txt", ".md"}:
        text = html.escape(document.read_text(encoding="utf-8", errors="replace"))
        page = folder / f"{document.stem}.html"
        style = "white-space:pre-wrap;font-size:12px"
        page.write_text(f'<meta charset="utf-8"><pre style="{style}">{text}</pre>', "utf-8")
    target = folder / f"{document.stem}.printed.pdf"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"]
    options = [
        f"--user-data-dir={folder}/profile",
        f"--print-to-pdf={target}",
        page.resolve().as_uri(),
    ]
    subprocess.run([*command, *options], check=True, capture_output=True, timeout=300)  # noqa: S603
    return target


def page_count(pdf: Path) -> int:
    return len(PdfReader(pdf).pages)


def scan_name(name: str) -> str:
    return str(Path(name).with_suffix(".pdf"))


def questions_for(path: Path, names: set[str], *, renamed: bool) -> list[str]:
    """The lines of the questions file whose gold (or closest) file is one of `names`, with
    the files named as their scans are where `renamed`."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if (record.get("gold_file") or record.get("closest_file")) not in names:
            continue
        if renamed:
            for key in ("gold_file", "closest_file"):
                if record.get(key):
                    record[key] = scan_name(record[key])
            line = json.dumps(record, ensure_ascii=False)
        kept.append(line)
    return kept


def evaluated(docs: Path, questions: Path, report: Path) -> dict[str, Any]:
    """evaluate_documents' whole report of DOCS (summary and one record per question)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "manage.py"), "evaluate_documents"]
    options = ["--docs", str(docs), "--questions", str(questions), "--json", str(report)]
    subprocess.run([*command, *options], check=True, env=env, cwd=ROOT)  # noqa: S603
    body: dict[str, Any] = json.loads(report.read_text("utf-8"))
    return body


def copies_made(docs: Path, work: Path, *, dpi: int, max_pages: int) -> list[Path]:
    """Each document of DOCS copied to work/originals and its scan written to work/scans; the
    documents kept (those whose paper copy is at most `max_pages` pages)."""
    originals, scans, printed = work / "originals", work / "scans", work / "printed"
    for folder in (originals, scans, printed):
        folder.mkdir(parents=True, exist_ok=True)
    kept = []
    for document in sorted(docs.iterdir()):
        if document.suffix.lower() not in {".pdf", *PRINTED}:
            continue
        paper = paper_copy(document, printed)
        pages = page_count(paper)
        if pages > max_pages:
            print(f"left out {document.name}: {pages} pages printed")
            continue
        print(f"{document.name}: {pages} pages", flush=True)
        (originals / document.name).write_bytes(document.read_bytes())
        (scans / scan_name(document.name)).write_bytes(scanned(paper, dpi=dpi))
        kept.append(document)
    return kept


def verdicts_differing(original: dict[str, Any], scan: dict[str, Any]) -> list[str]:
    """One line per question right over one copy and wrong over the other."""
    over_scan = {record["id"]: record for record in scan["questions"]}
    lines = []
    for record in original["questions"]:
        other = over_scan.get(record["id"])
        if other is not None and other["correct"] != record["correct"]:
            side = "original only" if record["correct"] else "scan only"
            lines.append(f"  {record['id']} right over the {side}: {record['question']}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--max-pages", type=int, default=20, help="longest paper copy kept")
    parser.add_argument("--work", type=Path, default=None, help="keep the copies here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ocr-answers-"))
    kept = copies_made(args.docs, work, dpi=args.dpi, max_pages=args.max_pages)
    names = {document.name for document in kept}
    runs = {}
    for name, renamed in (("originals", False), ("scans", True)):
        lines = questions_for(args.questions, names, renamed=renamed)
        questions = work / f"questions-{name}.jsonl"
        questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
        runs[name] = evaluated(work / name, questions, work / f"{name}.json")
    original, scan = runs["originals"]["summary"]["overall"], runs["scans"]["summary"]["overall"]
    gap = float(original["correct"] or 0) - float(scan["correct"] or 0)
    print(f"\n{len(kept)} documents, {len(lines)} questions, scanned at {args.dpi} dpi ({work})")
    for name, figures in (("original", original), ("scanned", scan)):
        print(
            f"{name:9} correct {figures['correct']}  gold file cited {figures['gold_file_cited']}"
            f"  false refusals {figures['false_refusals']}"
        )
    print("\n".join(verdicts_differing(runs["originals"], runs["scans"])))
    verdict = "within" if gap <= TARGET else "outside"
    print(f"difference {gap:+.3f} ({verdict} the {TARGET} target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
