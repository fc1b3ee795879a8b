"""Check the real-documents dev set against the text the platform extracts from its files.

    python benchmarks/real_docs_check.py --docs .data/real-docs \
        --questions benchmarks/data/real_docs/questions.jsonl

Parses every file of DOCS with the platform's own parser (`parse_document`), joins its blocks
and collapses whitespace, then checks each question of the set:
  - the record has the expected fields and values (kind, language, files that exist);
  - an answerable question's `quote` occurs in the text of its `gold_file` and its first
    answer (the canonical one, taken from the quote) occurs in the quote; further answers are
    variants and may be phrased differently;
  - an unanswerable question names an existing `closest_file`, has no answers and no quote, and
    none of its `absent_terms` occurs in that file's text.
Prints each miss, the counts per kind, per format, per language and per file, and exits 1 on
any miss. Comparisons of answers and terms ignore case; quotes are compared exactly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "fa")
FIELDS = ("id", "question", "language", "kind", "gold_file", "answers", "quote", "closest_file")
MAX_FILE_SHARE = 0.15


def normalise(text: str) -> str:
    return " ".join(text.split())


def document_texts(docs: Path) -> dict[str, str]:
    """The whitespace-collapsed text the platform extracts from each file of `docs`."""
    from apps.corpus.parsing import parse_document

    texts: dict[str, str] = {}
    for path in sorted(docs.iterdir()):
        if path.is_file():
            parsed = parse_document(filename=path.name, data=path.read_bytes())
            texts[path.name] = normalise(" ".join(block.text for block in parsed.blocks))
    return texts


def questions_load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def record_misses(record: dict[str, Any], texts: dict[str, str]) -> list[str]:
    """Why this record is wrong; empty when it is right."""
    missing = [field for field in FIELDS if field not in record]
    if missing:
        return [f"missing fields {missing}"]
    # The kinds `evaluate_documents` accepts; imported here, after Django is set up.
    from apps.answers.evaluation.document_questions import KINDS

    misses: list[str] = []
    if record["kind"] not in KINDS:
        misses.append(f"unknown kind {record['kind']!r}")
    if record["language"] not in LANGUAGES:
        misses.append(f"unknown language {record['language']!r}")
    if not isinstance(record["answers"], list):
        return [*misses, "answers is not a list"]
    if record["kind"] == "unanswerable":
        if record["gold_file"] is not None or record["quote"] is not None or record["answers"]:
            misses.append("unanswerable with a gold_file, a quote or answers")
        text = texts.get(record["closest_file"] or "")
        if text is None:
            return [*misses, f"closest_file {record['closest_file']!r} is not in the documents"]
        lowered = text.casefold()
        for term in record.get("absent_terms", []):
            if normalise(term).casefold() in lowered:
                misses.append(f"absent term {term!r} occurs in {record['closest_file']}")
        return misses
    text = texts.get(record["gold_file"] or "")
    if text is None:
        return [*misses, f"gold_file {record['gold_file']!r} is not in the documents"]
    if record["closest_file"] is not None:
        misses.append("answerable with a closest_file")
    if not record["answers"] or not record["quote"]:
        return [*misses, "answerable without answers or quote"]
    quote = normalise(record["quote"])
    if quote not in text:
        misses.append(f"quote not found in {record['gold_file']}: {quote[:100]!r}")
    if normalise(record["answers"][0]).casefold() not in quote.casefold():
        misses.append(f"first answer {record['answers'][0]!r} not in its quote")
    return misses


def file_format(name: str | None) -> str:
    return Path(name or "").suffix.lstrip(".").lower() or "?"


def counts_print(title: str, counts: Counter[str], total: int) -> None:
    print(f"\n{title}")
    for key, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {key:48s} {count:4d}  {100 * count / total:5.1f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    texts = document_texts(args.docs)
    records = questions_load(args.questions)
    misses = 0
    ids: Counter[str] = Counter(str(record.get("id")) for record in records)
    for duplicate in sorted(key for key, count in ids.items() if count > 1):
        print(f"MISS {duplicate}: id used {ids[duplicate]} times")
        misses += 1
    for record in records:
        for miss in record_misses(record, texts):
            print(f"MISS {record.get('id')}: {miss}")
            misses += 1
    total = len(records)
    if not total:
        print("no questions")
        return 1
    per_file: Counter[str] = Counter(
        str(record.get("gold_file") or record.get("closest_file")) for record in records
    )
    counts_print("per kind", Counter(str(record.get("kind")) for record in records), total)
    counts_print(
        "per format (gold file, or closest file when unanswerable)",
        Counter(file_format(r.get("gold_file") or r.get("closest_file")) for r in records),
        total,
    )
    counts_print("per language", Counter(str(record.get("language")) for record in records), total)
    counts_print("per file", per_file, total)
    for name, count in per_file.items():
        if count / total > MAX_FILE_SHARE:
            print(f"MISS {name}: {count} questions, more than {MAX_FILE_SHARE:.0%} of the set")
            misses += 1
    unused = sorted(set(texts) - set(per_file))
    if unused:
        print(f"\nfiles without questions: {', '.join(unused)}")
    words = sum(len(text.split()) for text in texts.values())
    print(f"\n{total} questions over {len(texts)} files ({words} words extracted); {misses} misses")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
