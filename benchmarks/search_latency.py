"""Search latency on an evaluation collection, query embedding excluded.

Runs each query of a BEIR-layout split through the retrieval pipeline in the product
configuration (20 chunks out) and in the evaluation configuration (200 per leg), per mode,
and prints p50/p95. The collection must have been loaded by `manage.py evaluate_retrieval`.

    python benchmarks/search_latency.py --dataset DATASETS/scifact --split test
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--repeat", type=int, default=2, help="passes over the queries")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    from asgiref.sync import async_to_sync

    from apps.answers.evaluation.beir import queries_load
    from apps.answers.evaluation.metrics import percentile
    from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
    from apps.answers.retrieval.types import RetrievalRequest
    from apps.corpus.models import Collection
    from apps.corpus.search.embedders import default_embedder
    from apps.corpus.search.legs import SearchFilters

    collection = Collection.objects.get(name=f"beir:{args.dataset.name}")
    filters = SearchFilters(collection_ids=(collection.pk,))
    queries = [q for q in queries_load(args.dataset, split=args.split) if q.relevant]
    embedder = default_embedder()
    vectors = [tuple(embedder.embed_query(q.text).tolist()) for q in queries]
    print(
        f"{len(queries)} queries, {collection.documents.count()} documents, load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'mode':8} {'chunks out':>10} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for mode in ("dense", "keyword", "hybrid"):
        for final_k, leg_k in ((20, 100), (200, 200)):
            config = RetrievalConfig(mode=mode, final_k=final_k, dense_k=leg_k, keyword_k=leg_k)
            retrieve = async_to_sync(Retriever(embedder=embedder, config=config).retrieve)
            timings: list[float] = []
            for _ in range(args.repeat):
                for query, vector in zip(queries, vectors, strict=True):
                    start = time.perf_counter()
                    retrieve(
                        RetrievalRequest(query=query.text, filters=filters, query_embedding=vector)
                    )
                    timings.append((time.perf_counter() - start) * 1000)
            print(
                f"{mode:8} {final_k:>10} {percentile(timings, 50):>8.1f} "
                f"{percentile(timings, 95):>8.1f} {statistics.fmean(timings):>8.1f}"
            )
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
