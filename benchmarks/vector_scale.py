"""Vector search at scale: pgvector HNSW build time, latency and recall@10 on synthetic embeddings.

    .venv/bin/python benchmarks/vector_scale.py --sizes 100000 1000000 [--queries 200]
        [--ef-search 40 100 200] [--maintenance-work-mem 2GB] [--keep]

Works in its own database (`ragbench`) on the embedded PostgreSQL server, never in the
platform's database. For each size it loads a table shaped like corpus_chunk (id, text,
embedding vector(384)) with COPY, builds the same HNSW index as the app (vector_cosine_ops,
m=16, ef_construction=64) and times it, then measures `ORDER BY embedding <=> q LIMIT 10`
for held-out queries at each ef_search: p50/p95 latency (warm cache, one client) and
recall@10 against exact nearest neighbours computed with numpy.

The vectors imitate sentence embeddings rather than uniform noise: unit vectors sharing a
common direction (like e5's), grouped around topic centres, with within-topic variation whose
variance decays over the dimensions (a low intrinsic dimension). The line "data:" prints the
resulting statistics so they can be compared with real chunk vectors.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

REPO = Path(__file__).resolve().parent.parent
DATABASE = "ragbench"
DIMS = 384
K = 10
# Shape of the synthetic data: |common|=1, then topic centre and within-topic noise weights.
CENTRE_WEIGHT = 0.35
NOISE_WEIGHT = 0.36
NOISE_DECAY = 0.8  # variance of the i-th noise direction ~ i**-0.8: about 64 effective dims
LOAD_BATCH = 50_000
TARGET_RECALL, TARGET_P95_MS, TARGET_SIZE = 0.95, 50.0, 100_000

Matrix = npt.NDArray[np.float32]
Ids = npt.NDArray[np.int64]


def unit(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class SyntheticEmbeddings:
    """Clustered unit vectors: common direction + topic centre + anisotropic noise."""

    def __init__(self, *, clusters: int, seed: int) -> None:
        rng = np.random.default_rng([seed, 0])
        self.clusters = clusters
        self.common = unit(rng.standard_normal(DIMS))
        self.centres = unit(rng.standard_normal((clusters, DIMS)))
        basis, _ = np.linalg.qr(rng.standard_normal((DIMS, DIMS)))
        spectrum = np.arange(1, DIMS + 1, dtype=np.float64) ** -NOISE_DECAY
        spectrum /= spectrum.sum()  # the noise has unit expected squared norm
        # z @ noise_map has covariance basis @ diag(spectrum) @ basis.T for z ~ N(0, I).
        self.noise_map = (np.sqrt(spectrum)[:, None] * basis.T).astype(np.float32)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[Matrix, Ids]:
        topics = rng.integers(0, self.clusters, n)
        noise = rng.standard_normal((n, DIMS), dtype=np.float32) @ self.noise_map
        x = self.common + CENTRE_WEIGHT * self.centres[topics] + NOISE_WEIGHT * noise
        return unit(x).astype(np.float32), topics


@dataclass(frozen=True)
class EfResult:
    ef_search: int
    p50_ms: float
    p95_ms: float
    recall: float


@dataclass(frozen=True)
class SizeResult:
    size: int
    load_s: float
    build_s: float
    index_mib: float
    efs: tuple[EfResult, ...]


def connect() -> psycopg.Connection[Any]:
    """The embedded server (started if needed) and the benchmark's own database."""
    sys.path.insert(0, str(REPO))  # run as a script, sys.path[0] is benchmarks/
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    from django.conf import settings
    from pgvector.psycopg import register_vector

    from ragplatform.embedded_postgres.server import embedded_server_ensure

    server = embedded_server_ensure(
        pgdata=settings.DATA_DIR / "pg",
        database=DATABASE,
        max_connections=int(str(settings.DATABASES["default"]["EMBEDDED_MAX_CONNECTIONS"])),
    )
    conn = psycopg.connect(
        host=server.socket_dir, user=server.user, dbname=DATABASE, autocommit=True
    )
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    return conn


def table_create(conn: psycopg.Connection[Any], table: str) -> None:
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
    conn.execute(
        sql.SQL(
            "CREATE TABLE {} (id bigint PRIMARY KEY, text text NOT NULL, "
            "embedding vector({}) NOT NULL)"
        ).format(sql.Identifier(table), sql.Literal(DIMS))
    )


def table_load(
    conn: psycopg.Connection[Any], table: str, synth: SyntheticEmbeddings, size: int, seed: int
) -> tuple[Matrix, float]:
    """Generate and COPY (binary) in batches; returns the stored vectors and the COPY seconds."""
    rng = np.random.default_rng([seed, 1])
    vectors = np.empty((size, DIMS), dtype=np.float32)
    copy_s = 0.0
    statement = sql.SQL("COPY {} (id, text, embedding) FROM STDIN WITH (FORMAT BINARY)").format(
        sql.Identifier(table)
    )
    for start in range(0, size, LOAD_BATCH):
        batch, topics = synth.sample(min(LOAD_BATCH, size - start), rng)
        vectors[start : start + len(batch)] = batch
        began = time.perf_counter()
        with conn.cursor() as cursor, cursor.copy(statement) as copy:
            copy.set_types(["int8", "text", "vector"])
            for offset, (vector, topic) in enumerate(zip(batch, topics, strict=True)):
                row_id = start + offset + 1
                copy.write_row((row_id, f"Synthetic passage {row_id} about topic {topic}.", vector))
        copy_s += time.perf_counter() - began
    conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(table)))
    return vectors, copy_s


def index_build(
    conn: psycopg.Connection[Any], table: str, maintenance_work_mem: str
) -> tuple[str, float, list[str]]:
    """The app's HNSW index; returns its name, the build seconds and the server's notices."""
    index = f"{table}_embedding_hnsw"
    notices: list[str] = []
    conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", [maintenance_work_mem])
    conn.execute("SELECT set_config('max_parallel_maintenance_workers', '1', false)")
    began = time.perf_counter()
    conn.execute(
        sql.SQL(
            "CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)"
        ).format(sql.Identifier(index), sql.Identifier(table))
    )
    return index, time.perf_counter() - began, notices


def exact_top_k(base: Matrix, queries: Matrix, block: int = 65_536) -> tuple[Ids, np.ndarray]:
    """Brute-force cosine top-K (ids are row numbers + 1, as in the table) in float64."""
    q = queries.astype(np.float64)
    best_ids = np.empty((len(q), 0), dtype=np.int64)
    best_sims = np.empty((len(q), 0), dtype=np.float64)
    for start in range(0, len(base), block):
        sims = q @ base[start : start + block].astype(np.float64).T
        ids = np.broadcast_to(np.arange(start + 1, start + 1 + sims.shape[1]), sims.shape)
        all_sims, all_ids = np.hstack([best_sims, sims]), np.hstack([best_ids, ids])
        top = np.argpartition(-all_sims, K - 1, axis=1)[:, :K]
        best_sims = np.take_along_axis(all_sims, top, axis=1)
        best_ids = np.take_along_axis(all_ids, top, axis=1)
    return best_ids, best_sims


def plan_check(conn: psycopg.Connection[Any], query: sql.Composed, index: str, q: Matrix) -> None:
    rows = conn.execute(sql.SQL("EXPLAIN ") + query, [q[0]]).fetchall()
    plan = "\n".join(r[0] for r in rows)
    if f"Index Scan using {index}" not in plan:
        raise RuntimeError(f"The query does not use the HNSW index:\n{plan}")


def searches_time(
    conn: psycopg.Connection[Any], query: sql.Composed, queries: Matrix, ef_search: int
) -> tuple[list[float], Ids]:
    """Wall-clock milliseconds per query (client side, prepared statement) and the ids found."""
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(ef_search)])
    latencies: list[float] = []
    found = np.zeros((len(queries), K), dtype=np.int64)
    with conn.cursor() as cursor:
        for i, q in enumerate(queries):
            began = time.perf_counter()
            cursor.execute(query, [q], prepare=True)
            ids = [r[0] for r in cursor.fetchall()]
            latencies.append((time.perf_counter() - began) * 1000)
            found[i, : len(ids)] = ids
    return latencies, found


def recall_at_k(found: Ids, exact: Ids) -> float:
    return float(np.mean([len(set(f) & set(e)) / K for f, e in zip(found, exact, strict=True)]))


def data_stats(base: Matrix, nearest_sims: np.ndarray, rng: np.random.Generator) -> str:
    """Figures comparable with real chunk vectors (see docs/benchmarks.md)."""
    sample = base[rng.choice(len(base), size=min(4000, len(base)), replace=False)]
    pairs = (sample[: len(sample) // 2] * sample[len(sample) // 2 :]).sum(axis=1)
    return (
        f"data: query-to-nearest cosine {nearest_sims.max(axis=1).mean():.3f}, random pair "
        f"cosine {pairs.mean():.3f}, "
        f"|mean vector| {np.linalg.norm(sample.mean(axis=0)):.3f}"
    )


def size_measure(
    conn: psycopg.Connection[Any],
    synth: SyntheticEmbeddings,
    queries: Matrix,
    size: int,
    args: argparse.Namespace,
) -> SizeResult:
    table = f"bench_chunk_{size}"
    try:
        table_create(conn, table)
        base, load_s = table_load(conn, table, synth, size, args.seed)
        print(f"[{size:,}] loaded in {load_s:.1f} s (COPY); building the index...", flush=True)
        index, build_s, notices = index_build(conn, table, args.maintenance_work_mem)
        for notice in notices:
            print(f"[{size:,}] server notice: {notice}")
        exact, exact_sims = exact_top_k(base, queries)
        print(data_stats(base, exact_sims, np.random.default_rng(args.seed)))
        del base
        efs = efs_measure(conn, table, index, queries, exact, args.ef_search)
        index_mib = conn.execute("SELECT pg_relation_size(%s::regclass)", [index]).fetchone()
    finally:
        if not args.keep:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
    return SizeResult(size, load_s, build_s, (index_mib or [0])[0] / 2**20, efs)


def efs_measure(
    conn: psycopg.Connection[Any],
    table: str,
    index: str,
    queries: Matrix,
    exact: Ids,
    ef_values: Sequence[int],
) -> tuple[EfResult, ...]:
    query = sql.SQL("SELECT id FROM {} ORDER BY embedding <=> %s LIMIT {}").format(
        sql.Identifier(table), sql.Literal(K)
    )
    plan_check(conn, query, index, queries)
    searches_time(conn, query, queries, max(ef_values))  # warm-up: pages into the caches
    results = []
    for ef in ef_values:
        latencies, found = searches_time(conn, query, queries, ef)
        p50, p95 = np.percentile(latencies, [50, 95])
        results.append(EfResult(ef, float(p50), float(p95), recall_at_k(found, exact)))
    return tuple(results)


def size_print(result: SizeResult) -> None:
    print(
        f"{'size':>10} {'build s':>8} {'index MiB':>9} {'ef_search':>9} {'p50 ms':>7} "
        f"{'p95 ms':>7} {'recall@10':>9}"
    )
    for ef in result.efs:
        print(
            f"{result.size:>10,} {result.build_s:>8.1f} {result.index_mib:>9.0f} "
            f"{ef.ef_search:>9} {ef.p50_ms:>7.2f} {ef.p95_ms:>7.2f} {ef.recall:>9.3f}"
        )
    if result.size == TARGET_SIZE:
        met = [
            e.ef_search
            for e in result.efs
            if e.recall >= TARGET_RECALL and e.p95_ms <= TARGET_P95_MS
        ]
        verdict = f"met at ef_search {', '.join(map(str, met))}" if met else "not met"
        print(f"target (recall@10 >= {TARGET_RECALL} at p95 <= {TARGET_P95_MS:.0f} ms): {verdict}")


def growth_print(results: Sequence[SizeResult]) -> None:
    for small, large in itertools.pairwise(results):
        factor = large.size / small.size
        print(f"growth {small.size:,} -> {large.size:,} ({factor:g}x rows):")
        print(
            f"  build {small.build_s:.1f} s -> {large.build_s:.1f} s "
            f"(x{large.build_s / small.build_s:.1f}); COPY x{large.load_s / small.load_s:.1f}; "
            f"index x{large.index_mib / max(small.index_mib, 1e-9):.1f}"
        )
        for a, b in zip(small.efs, large.efs, strict=True):
            print(
                f"  ef_search {a.ef_search}: p95 {a.p95_ms:.2f} -> {b.p95_ms:.2f} ms "
                f"(x{b.p95_ms / a.p95_ms:.2f}), recall@10 {a.recall:.3f} -> {b.recall:.3f}"
            )


def load_line() -> str:
    workers = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            workers += bool({b"db_worker", b"worker"} & set(cmdline.read_bytes().split(b"\0")))
        except OSError:
            continue
    return f"load average {os.getloadavg()[0]:.2f}, db_worker processes running: {workers}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="pgvector HNSW build, latency and recall")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--maintenance-work-mem", default="2GB")
    parser.add_argument("--keep", action="store_true", help="keep the tables (and indexes)")
    args = parser.parse_args(argv)
    if min(args.ef_search) < K or min(args.sizes) < K or args.queries < 1:
        parser.error(f"sizes and ef_search values must be at least {K}; queries at least 1")
    synth = SyntheticEmbeddings(clusters=args.clusters, seed=args.seed)
    queries, _ = synth.sample(args.queries, np.random.default_rng([args.seed, 2]))
    print(f"{os.cpu_count()} cores, {load_line()}; {args.queries} held-out queries", flush=True)
    results = []
    with connect() as conn:
        version = conn.info.server_version
        vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        print(
            f"PostgreSQL {version // 10000}.{version % 10000}, "
            f"pgvector {(vector.fetchone() or ['?'])[0]}"
        )
        for size in args.sizes:
            results.append(size_measure(conn, synth, queries, size, args))
            size_print(results[-1])
            print(load_line(), flush=True)
    growth_print(results)


if __name__ == "__main__":
    main()
