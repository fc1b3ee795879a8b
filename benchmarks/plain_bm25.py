"""A plain BM25 over whole passages, as the yardstick for the platform's keyword leg.

Tokens are `\\w+` runs, lower-cased, nothing else (no normalisation, no stemming); BM25 with
k1 = 1.2 and b = 0.75, the platform's own parameters. Prints nDCG@10 and recall@100 for one
split of a BEIR-layout set; compare with

    python manage.py evaluate_retrieval --dataset DATASETS/parsinlu-rc --split dev --mode keyword

It reads the files only (Django is set up for the shared loaders, the database is not used):

    python benchmarks/plain_bm25.py --dataset DATASETS/parsinlu-rc --split dev
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOKEN = re.compile(r"\w+")
K1, B = 1.2, 0.75


def tokens(text: str) -> list[str]:
    return [t.lower() for t in TOKEN.findall(text)]


class PlainBM25:
    def __init__(self, passages: Mapping[str, str]) -> None:
        self.ids = list(passages)
        self.counts = [Counter(tokens(passages[i])) for i in self.ids]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = sum(self.lengths) / len(self.lengths)
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        total = len(self.ids)
        self.idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}

    def ranked(self, query: str, limit: int = 100) -> list[str]:
        terms = set(tokens(query)) & self.idf.keys()
        scores = [(self._score(terms, i), doc) for i, doc in enumerate(self.ids)]
        best = sorted((s for s in scores if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [doc for _, doc in best[:limit]]

    def _score(self, terms: Iterable[str], index: int) -> float:
        counts, norm = self.counts[index], self.lengths[index] / self.average
        return sum(
            self.idf[t] * counts[t] * (K1 + 1) / (counts[t] + K1 * (1 - B + B * norm))
            for t in terms
            if t in counts
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    from apps.answers.evaluation.beir import corpus_records, queries_load
    from apps.answers.evaluation.metrics import ndcg_at_k, recall_at_k

    passages = {
        r["_id"]: f"{r.get('title') or ''} {r['text']}" for r in corpus_records(args.dataset)
    }
    index = PlainBM25(passages)
    queries = [q for q in queries_load(args.dataset, split=args.split) if q.relevant]
    runs = [(index.ranked(q.text), q.relevant) for q in queries]
    figures = {
        "dataset": args.dataset.name,
        "split": args.split,
        "queries": len(runs),
        "ndcg@10": round(sum(ndcg_at_k(r, rel) for r, rel in runs) / len(runs), 4),
        "recall@100": round(sum(recall_at_k(r, rel) for r, rel in runs) / len(runs), 4),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
