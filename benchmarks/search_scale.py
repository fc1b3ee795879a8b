"""Dense, keyword and hybrid search over 100,000 to 1,000,000 chunks of English and Persian text.

    nice -n 10 .venv/bin/python benchmarks/search_scale.py --sizes 100000 1000000 \\
        [--queries 100] [--budgets 20000 50000] [--depth 500] [--ef-search 100 200] \\
        [--eval-root /work/shared/eval] [--maintenance-work-mem 4GB] [--keep]

Works in its own database (`ragscale`) on the embedded server, migrated like the platform's,
never in the platform's database. For each size it fills corpus_document, corpus_chunk and
corpus_chunkterm (benchmarks/search_scale_data.py says how the text and vectors are made),
builds the search indexes, then runs `--queries` questions per language (the evaluation sets'
own questions: they hold common words) through the platform's own selectors:

- dense: `chunks_dense_search` at each ef_search; recall@10 against exact cosine (numpy);
- keyword: `chunks_keyword_search` exact (every posting: today's leg, and the reference), and
  pruned at each postings budget; recall@10 of pruned against exact;
- PostgreSQL's own `ts_rank_cd` over the GIN index, side by side (on the first questions only:
  it is slow); its overlap with BM25's top 10 is printed, not a recall (another ranking);
- hybrid: the retrieval pipeline in the product configuration (100 per leg, 20 out, z-score
  fusion), query embedding excluded; recall@10 against the fusion of the exact legs.

Latencies are client-side wall clock after one warm-up pass (each cache warm, as a busy
server's would be), all variants of a question run one after another, so load changes hit
them alike. Tables are emptied at the end unless --keep.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
DATABASE = "ragscale"
K = 10
LEG_K = 100
TS_RANK_QUERIES = 20
TARGETS = {"keyword_p95_1m": 100.0, "hybrid_p95_1m": 150.0, "hybrid_p95_100k": 40.0}


@dataclass
class Series:
    """Latencies (ms) and recall@10 of one method over the questions, by language."""

    times: dict[str, list[float]] = field(default_factory=dict)
    recalls: dict[str, list[float]] = field(default_factory=dict)

    def add(self, language: str, ms: float, recall: float | None) -> None:
        self.times.setdefault(language, []).append(ms)
        if recall is not None:
            self.recalls.setdefault(language, []).append(recall)

    def line(self, name: str) -> str:
        cells = [f"{name:34}"]
        for language in ("en", "fa"):
            t = self.times.get(language, [])
            r = self.recalls.get(language, [])
            p50, p95 = np.percentile(t, [50, 95]) if t else (float("nan"),) * 2
            recall = f"{np.mean(r):.3f}" if r else "  -  "
            cells.append(f"{language} p50 {p50:8.1f} p95 {p95:8.1f} r@10 {recall}")
        return " | ".join(cells)

    def p95(self) -> float:
        every = [t for times in self.times.values() for t in times]
        return float(np.percentile(every, 95)) if every else float("nan")

    def recall_min(self) -> float:
        return min((float(np.mean(r)) for r in self.recalls.values() if r), default=float("nan"))


def django_setup() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    # A pool keeps the database it was opened on: without one, the NAME set below is used.
    os.environ["DATABASE_POOL"] = "false"
    import django
    from django.conf import settings

    django.setup()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE])
        if cursor.fetchone() is None:
            cursor.execute(f"CREATE DATABASE {DATABASE}")
    connection.close()
    settings.DATABASES["default"]["NAME"] = DATABASE
    connection.settings_dict["NAME"] = DATABASE
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        # This script empties the corpus tables: never anywhere but its own database.
        if (cursor.fetchone() or [""])[0] != DATABASE:
            raise SystemExit(f"refusing to run outside the {DATABASE} database")


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    began = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - began) * 1000


def overlap(found: Sequence[int], exact: Sequence[int]) -> float:
    truth = set(exact[:K])
    return len(set(found[:K]) & truth) / max(len(truth), 1)


def exact_dense(
    vectors: npt.NDArray[np.float32], q: npt.NDArray[np.float32]
) -> list[tuple[int, float]]:
    sims = vectors @ q
    top = np.argpartition(-sims, LEG_K)[:LEG_K]
    top = top[np.argsort(-sims[top])]
    return [(int(i) + 1, float(sims[i])) for i in top]


def size_run(size: int, args: argparse.Namespace, corpus: Any) -> dict[str, Series]:
    from django.db import connection
    from pgvector.psycopg import register_vector

    from apps.corpus.models import Collection
    from benchmarks import search_scale_data as data

    collection, _ = Collection.objects.get_or_create(name="scale")
    raw = connection.connection if connection.connection else None
    if raw is None:
        connection.ensure_connection()
        raw = connection.connection
    register_vector(raw)
    plan = data.Plan(size=size, persian_share=args.persian_share, seed=args.seed)
    with raw.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        if (cursor.fetchone() or [""])[0] != DATABASE:
            raise SystemExit(f"refusing to empty tables outside the {DATABASE} database")
        data.tables_empty(cursor)
        vectors, copy_s = data.staging_load(cursor, plan, corpus.languages, corpus.synth)
        print(f"[{size:,}] generated and copied in {copy_s:.0f} s", flush=True)
        filled = data.tables_fill(cursor, collection_id=collection.pk, size=size)
        print(
            f"[{size:,}] insert: " + ", ".join(f"{k} {v:.0f} s" for k, v in filled.items()),
            flush=True,
        )
        built = data.indexes_build(cursor, args.maintenance_work_mem)
        print(
            f"[{size:,}] indexes: " + ", ".join(f"{k} {v:.0f} s" for k, v in built.items()),
            flush=True,
        )
        sizes_print(cursor, size)
    try:
        return measure(size, args, corpus, vectors, collection.pk)
    finally:
        if not args.keep:
            with connection.cursor() as cursor:
                cursor.execute("TRUNCATE corpus_chunkterm, corpus_chunk, corpus_document CASCADE")


def sizes_print(cursor: Any, size: int) -> None:
    cursor.execute(
        "SELECT c.relname, pg_total_relation_size(c.oid) / 1048576.0, "
        "pg_relation_size(c.oid) / 1048576.0 FROM pg_class c WHERE c.relname IN "
        "('corpus_chunk', 'corpus_chunkterm', 'corpus_chunkterm_postings', "
        "'corpus_chunkterm_once', 'corpus_chunk_search_gin', 'corpus_chunk_embedding_hnsw')"
    )
    parts = [f"{name} {total:.0f} MiB" for name, total, _ in cursor.fetchall()]
    cursor.execute("SELECT count(*) FROM corpus_chunkterm")
    postings = (cursor.fetchone() or [0])[0]
    print(
        f"[{size:,}] {postings:,} postings ({postings / size:.0f} per chunk); " + ", ".join(parts)
    )
    cursor.execute(
        "SELECT config, lexeme, count(*) FROM corpus_chunkterm WHERE lexeme IN "
        "('و', 'در', 'به', 'از', 'که', 'است', 'این', 'را', 'studi', 'cell', 'use', 'patient') "
        "GROUP BY config, lexeme ORDER BY 3 DESC"
    )
    shares = [f"{lex}({cfg[0]}) {n / size:.1%}" for cfg, lex, n in cursor.fetchall()]
    print(f"[{size:,}] chunks holding common words: " + ", ".join(shares), flush=True)


def measure(
    size: int,
    args: argparse.Namespace,
    corpus: Any,
    vectors: npt.NDArray[np.float32],
    collection_id: int,
) -> dict[str, Series]:
    from apps.corpus.search.keyword_pruned import KeywordPruning
    from apps.corpus.search.legs import KeywordQuery, SearchFilters, chunks_keyword_search
    from apps.corpus.search.scope import _stats_cache, scope_stats

    filters = SearchFilters(collection_ids=(collection_id,))
    _stats_cache.clear()
    _, cold = timed(lambda: scope_stats(filters))
    print(f"[{size:,}] scope figures (count, mean length), uncached: {cold:.0f} ms", flush=True)
    prunings = [KeywordPruning(budget, args.depth) for budget in args.budgets]
    questions = corpus.questions
    queries = [KeywordQuery.from_text(q.text) for q in questions]
    for query in queries:  # warm-up: the pruned leg's caches and the postings' pages
        for pruning in prunings:
            chunks_keyword_search(query=query, filters=filters, limit=LEG_K, pruning=pruning)
    series: dict[str, Series] = {}
    for i, (question, query) in enumerate(zip(questions, queries, strict=True)):
        question_measure(
            i, question, query, corpus.query_vectors[i], vectors, filters, prunings, args, series
        )
    return series


def question_measure(
    i: int,
    question: Any,
    query: Any,
    vector: npt.NDArray[np.float32],
    vectors: npt.NDArray[np.float32],
    filters: Any,
    prunings: Sequence[Any],
    args: argparse.Namespace,
    series: dict[str, Series],
) -> None:
    from asgiref.sync import async_to_sync

    from apps.answers.retrieval.fusion import zscore_fuse
    from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
    from apps.answers.retrieval.types import RetrievalRequest
    from apps.corpus.search.legs import ScoredChunk, chunks_dense_search, chunks_keyword_search

    language = question.language

    def add(name: str, ms: float, recall: float | None) -> None:
        series.setdefault(name, Series()).add(language, ms, recall)

    exact_d = exact_dense(vectors, vector)
    dense_truth = [c for c, _ in exact_d]
    embedding = vector.tolist()
    for ef in args.ef_search:
        found, ms = timed(
            partial(
                chunks_dense_search, embedding=embedding, filters=filters, limit=LEG_K, ef_search=ef
            )
        )
        add(f"dense ef_search {ef}", ms, overlap([c.chunk_id for c in found], dense_truth))
    exact_k, ms = timed(lambda: chunks_keyword_search(query=query, filters=filters, limit=LEG_K))
    keyword_truth = [c.chunk_id for c in exact_k]
    add("keyword exact BM25 (today)", ms, 1.0)
    for pruning in prunings:
        found, ms = timed(
            partial(
                chunks_keyword_search, query=query, filters=filters, limit=LEG_K, pruning=pruning
            )
        )
        add(
            f"keyword pruned {pruning.postings_budget}",
            ms,
            overlap([c.chunk_id for c in found], keyword_truth),
        )
    gin = "keyword ts_rank_cd (GIN) [overlap]"
    if len(series.get(gin, Series()).times.get(language, [])) < args.ts_rank_queries:
        found, ms = timed(
            lambda: chunks_keyword_search(
                query=query, filters=filters, limit=LEG_K, scoring="ts_rank_cd"
            )
        )
        add(gin, ms, overlap([c.chunk_id for c in found], keyword_truth))
    dense_scored = [ScoredChunk(c, s) for c, s in exact_d]
    fused = zscore_fuse(dense=dense_scored, keyword=exact_k, dense_share=0.6)
    hybrid_truth = [c.chunk_id for c in fused]
    configs = [(ef, p) for ef in args.ef_search for p in prunings] + [(max(args.ef_search), None)]
    for ef, pruning in configs:
        config = RetrievalConfig(ef_search=ef, keyword_pruning=pruning)
        retrieve = async_to_sync(Retriever(embedder=NO_EMBEDDER, config=config).retrieve)
        request = RetrievalRequest(
            query=question.text, filters=filters, query_embedding=tuple(embedding)
        )
        result, ms = timed(partial(retrieve, request))
        label = "exact" if pruning is None else f"pruned {pruning.postings_budget}"
        found_ids = [c.chunk_id for c in result.chunks]
        add(f"hybrid ef {ef}, keyword {label}", ms, overlap(found_ids, hybrid_truth))


class _NoEmbedder:
    """The question's vector is passed in; nothing may embed during the measurement."""

    model_id = "bench/synthetic"
    dimensions = 384

    def embed_query(self, text: str) -> Any:
        raise RuntimeError("the benchmark passes every query vector")

    def embed_passages(self, texts: Sequence[str]) -> Any:
        raise RuntimeError("the benchmark passes every query vector")


NO_EMBEDDER: Any = _NoEmbedder()


@dataclass(frozen=True)
class Corpus:
    languages: dict[str, Any]
    synth: Any
    questions: list[Any]
    query_vectors: npt.NDArray[np.float32]


def corpus_prepare(args: argparse.Namespace) -> Corpus:
    from benchmarks import search_scale_data as data
    from benchmarks.vector_scale import SyntheticEmbeddings

    languages = {code: data.language_load(code, args.eval_root) for code in data.SOURCES}
    for code, language in languages.items():
        words = sum(len(s) for s in language.sentences)
        print(
            f"{code}: {len(language.passage_sentences):,} passages, {len(language.sentences):,} "
            f"sentences, {words:,} words, {len(language.vocabulary):,} distinct"
        )
    synth = SyntheticEmbeddings(clusters=args.clusters, seed=args.seed)
    questions = data.questions_load(languages, args.eval_root, args.queries, args.seed)
    return Corpus(languages, synth, questions, data.question_vectors(questions, synth, args.seed))


def load_line() -> str:
    return f"load average {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} (1 / 5 min)"


def results_print(size: int, series: dict[str, Series]) -> None:
    print(f"[{size:,}] latency ms and recall@10 against exact, per language; {load_line()}")
    for name, values in series.items():
        print("  " + values.line(name))


def verdicts_print(size: int, series: dict[str, Series]) -> None:
    keyword = {n: s for n, s in series.items() if n.startswith("keyword pruned")}
    hybrid = {n: s for n, s in series.items() if n.startswith("hybrid") and "pruned" in n}
    if size >= 1_000_000:
        for name, s in keyword.items():
            ok = s.p95() <= TARGETS["keyword_p95_1m"] and s.recall_min() >= 0.95
            print(
                f"  target keyword p95 <= 100 ms, recall >= 0.95 ({name}): "
                f"p95 {s.p95():.1f}, recall {s.recall_min():.3f}: {'met' if ok else 'not met'}"
            )
    target = TARGETS["hybrid_p95_1m"] if size >= 1_000_000 else TARGETS["hybrid_p95_100k"]
    for name, s in hybrid.items():
        ok = s.p95() <= target and s.recall_min() >= 0.95
        print(
            f"  target hybrid p95 <= {target:.0f} ms, recall >= 0.95 ({name}): "
            f"p95 {s.p95():.1f}, recall {s.recall_min():.3f}: {'met' if ok else 'not met'}"
        )


def growth_print(results: dict[int, dict[str, Series]]) -> None:
    sizes = sorted(results)
    for small, large in itertools.pairwise(sizes):
        print(f"growth {small:,} -> {large:,} chunks (p95 ms, both languages):")
        for name, s in results[large].items():
            before = results[small].get(name)
            if before is not None:
                print(
                    f"  {name:38} {before.p95():8.1f} -> {s.p95():8.1f} (x{s.p95() / before.p95():.1f})"
                )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=100, help="questions per language")
    parser.add_argument("--budgets", type=int, nargs="+", default=[50_000])
    parser.add_argument("--depth", type=int, default=500, help="RAG_KEYWORD_RESCORE_DEPTH")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--ts-rank-queries", type=int, default=TS_RANK_QUERIES)
    parser.add_argument("--persian-share", type=float, default=0.5)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-root", type=Path, default=Path("/work/shared/eval"))
    parser.add_argument("--maintenance-work-mem", default="2GB")
    parser.add_argument("--keep", action="store_true", help="keep the last size's rows")
    args = parser.parse_args(argv)
    django_setup()
    print(f"{os.cpu_count()} cores, {load_line()}", flush=True)
    corpus = corpus_prepare(args)
    results: dict[int, dict[str, Series]] = {}
    for size in args.sizes:
        results[size] = size_run(size, args, corpus)
        results_print(size, results[size])
        verdicts_print(size, results[size])
    growth_print(results)


if __name__ == "__main__":
    main()
