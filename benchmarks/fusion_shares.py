"""nDCG@10 of every fusion of the two legs from one pass over a split's queries.

Each query's dense and keyword lists (200 chunks each, as `evaluate_retrieval` fetches them)
are searched once; then dense alone, keyword alone, reciprocal rank fusion (k 20) and z-score
fusion at each dense share are scored on the same lists with the platform's own fusion
functions. The figures equal `evaluate_retrieval --mode hybrid --dense-share S` run once per
share (the retrieval is the same, only the fusion differs). The dataset must have been loaded
by `evaluate_retrieval` first (the collection `beir:NAME`):

    python benchmarks/fusion_shares.py --dataset DATASETS/parsinlu-rc --split train
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARES = (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--split", default="test")
    parser.add_argument("--shares", type=float, nargs="+", default=list(SHARES))
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    rows = _legs(args.dataset, args.split)
    print(f"{args.dataset.name} {args.split}: {len(rows)} queries")
    for label, figure in _figures(rows, args.shares):
        print(f"{label:<22} {figure:.4f}")


def _legs(dataset: Path, split: str) -> list[tuple[dict[str, int], list, list, dict[int, str]]]:
    from apps.answers.evaluation.beir import corpus_id_from_filename, queries_load
    from apps.corpus.models import Chunk, Collection
    from apps.corpus.search.embedders import default_embedder
    from apps.corpus.search.legs import (
        KeywordQuery,
        SearchFilters,
        chunks_dense_search,
        chunks_keyword_search,
    )

    collection = Collection.objects.get(name=f"beir:{dataset.name}")
    filters = SearchFilters(collection_ids=(collection.pk,))
    pairs = Chunk.objects.filter(document__collection=collection).values_list(
        "id", "document__filename"
    )
    documents = {chunk_id: corpus_id_from_filename(name) for chunk_id, name in pairs}
    embedder = default_embedder()
    rows = []
    for query in (q for q in queries_load(dataset, split=split) if q.relevant):
        vector = embedder.embed_query(query.text).tolist()
        dense = chunks_dense_search(embedding=vector, filters=filters, limit=200, ef_search=100)
        keyword = chunks_keyword_search(
            query=KeywordQuery.from_text(query.text), filters=filters, limit=200
        )
        rows.append((query.relevant, dense, keyword, documents))
    return rows


def _figures(rows: Sequence[tuple], shares: Sequence[float]) -> list[tuple[str, float]]:
    from apps.answers.retrieval.fusion import rrf_fuse

    def ndcg(fuse: Callable[[list, list], list[int]]) -> float:
        from apps.answers.evaluation.metrics import ndcg_at_k

        total = 0.0
        for relevant, dense, keyword, documents in rows:
            ranked = list(dict.fromkeys(documents[c] for c in fuse(dense, keyword)))
            total += ndcg_at_k(ranked, relevant, 10)
        return total / len(rows)

    figures = [
        ("dense", ndcg(lambda d, k: [h.chunk_id for h in d])),
        ("keyword", ndcg(lambda d, k: [h.chunk_id for h in k])),
        ("rrf k20", ndcg(lambda d, k: [c.chunk_id for c in rrf_fuse(dense=d, keyword=k, k=20)])),
    ]
    for share in shares:
        figures.append((f"zscore share {share:.2f}", ndcg(partial(_zscore_ids, share=share))))
    return figures


def _zscore_ids(dense: list, keyword: list, *, share: float) -> list[int]:
    from apps.answers.retrieval.fusion import zscore_fuse

    return [c.chunk_id for c in zscore_fuse(dense=dense, keyword=keyword, dense_share=share)]


if __name__ == "__main__":
    main()
