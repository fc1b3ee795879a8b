"""Answers over a scanned copy against answers over the original: the same questions asked,
through the full turn path, of a folder of PDFs and of the same PDFs scanned.

    .venv/bin/python benchmarks/ocr_answers.py --docs .data/real-docs \
        --questions benchmarks/data/real_docs/questions.jsonl [--dpi 200] [--work DIR]

Takes the PDFs of DOCS and the questions whose files are among them, writes a copy of each
PDF as a scanner returns it (every page rendered by pdftoppm at --dpi, greyscale, wrapped back
into an image-only PDF by Pillow, the same file name), then runs `manage.py
evaluate_documents` on the originals and on the scans (OCR reads the scans on ingestion) and
prints each run's share of correct answers and the difference. Target (issue #26): the scanned
copy answers as often correctly as the original, within 0.05.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.05


def scanned(pdf: Path, *, dpi: int) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        command = ["pdftoppm", "-r", str(dpi), "-gray", "-png", str(pdf), f"{folder}/page"]
        subprocess.run(command, check=True, timeout=1800)  # noqa: S603
        pages = [Image.open(path) for path in sorted(Path(folder).glob("page-*.png"))]
        buffer = io.BytesIO()
        first, *rest = [page.convert("L") for page in pages]
        first.save(buffer, format="PDF", save_all=True, append_images=rest, resolution=dpi)
        return buffer.getvalue()


def questions_for(path: Path, names: set[str]) -> list[str]:
    """The lines of the questions file whose gold (or closest) file is one of `names`."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if (record.get("gold_file") or record.get("closest_file")) in names:
                kept.append(line)
    return kept


def evaluated(docs: Path, questions: Path, report: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "manage.py"), "evaluate_documents"]
    options = ["--docs", str(docs), "--questions", str(questions), "--json", str(report)]
    subprocess.run([*command, *options], check=True, env=env, cwd=ROOT)  # noqa: S603
    summary: dict[str, Any] = json.loads(report.read_text("utf-8"))["summary"]["overall"]
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--work", type=Path, default=None, help="keep the copies here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ocr-answers-"))
    originals, scans = work / "originals", work / "scans"
    originals.mkdir(parents=True, exist_ok=True)
    scans.mkdir(exist_ok=True)
    pdfs = sorted(args.docs.glob("*.pdf"))
    for pdf in pdfs:
        (originals / pdf.name).write_bytes(pdf.read_bytes())
        (scans / pdf.name).write_bytes(scanned(pdf, dpi=args.dpi))
    questions = work / "questions.jsonl"
    lines = questions_for(args.questions, {pdf.name for pdf in pdfs})
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    original = evaluated(originals, questions, work / "originals.json")
    scan = evaluated(scans, questions, work / "scans.json")
    gap = float(original["correct"] or 0) - float(scan["correct"] or 0)
    print(f"\n{len(pdfs)} PDFs, {len(lines)} questions, scanned at {args.dpi} dpi ({work})")
    for name, figures in (("original", original), ("scanned", scan)):
        print(
            f"{name:9} correct {figures['correct']}  gold file cited {figures['gold_file_cited']}"
            f"  false refusals {figures['false_refusals']}"
        )
    verdict = "within" if gap <= TARGET else "outside"
    print(f"difference {gap:+.3f} ({verdict} the {TARGET} target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
