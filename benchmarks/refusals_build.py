"""Build a small English answer set over docs/guide with questions it cannot answer, for
`manage.py evaluate_answers` (honest refusals, false refusals, gold page cited).

    python benchmarks/refusals_build.py --out /tmp/guide-refusals
    python manage.py evaluate_answers --dataset /tmp/guide-refusals --json out.json

The 40 questions are in benchmarks/data/refusals_guide.jsonl: 20 the guide answers (with the
page that does) and 20 it does not (company policies, general knowledge, another product's
matters), written by hand. OUT gets the BEIR layout evaluate_answers reads: corpus.jsonl (one
passage a guide page, English and Persian), queries.jsonl (with `is_impossible`) and
qrels/test.tsv.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.multiturn_build import guide_records, jsonl

QUESTIONS = Path(__file__).resolve().parent / "data" / "refusals_guide.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    (args.out / "qrels").mkdir(parents=True, exist_ok=True)
    with (args.out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for record in guide_records():
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    questions = list(jsonl(QUESTIONS))
    with (args.out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for q in questions:
            row = {"_id": q["_id"], "text": q["text"], "is_impossible": q["is_impossible"]}
            handle.write(json.dumps(row) + "\n")
    with (args.out / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for q in questions:
            for page in q["gold"]:  # type: ignore[attr-defined]
                handle.write(f"{q['_id']}\t{page}\t1\n")
    print(f"{len(questions)} questions -> {args.out}")


if __name__ == "__main__":
    main()
