"""Source sync speed: 2,000 small files from a folder, an S3 bucket (SeaweedFS) and an SMB share
(Samba), 2,000 messages from an IMAP mailbox (Dovecot), and a crawl of a documentation site
served locally (Debian's python3.11-doc HTML).

    .venv/bin/python benchmarks/source_sync.py [--files 2000] [--pages 300] [--site DIR]
        [--kinds folder,s3,smb,imap,web]

For each source: the first sync (list, fetch, store and process every document, with a
hashing stand-in embedder so the figure is the sync's and ingestion's own cost, not the
model's) and a second sync with nothing changed (target: <= 10 s for 2,000 items, fetching
no content; the script counts every fetch and every page read). The crawl's second run asks
every page with its Last-Modified and gets 304s. Throwaway collections and sources are
deleted at the end, also on error; servers run in temporary folders.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET_UNCHANGED_S = 10.0
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


def django_setup(media_root: Path) -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    os.environ["RAG_MEDIA_ROOT"] = str(media_root)
    # The crawled site is served on 127.0.0.1, an address a website source refuses by default.
    os.environ["RAG_SOURCE_WEB_ALLOWED_NETWORKS"] = "127.0.0.1/32"
    import django

    django.setup()


class Reads:
    """Counts content read from a source: fetches, and pages a crawl had to download."""

    def __init__(self) -> None:
        self.count = 0

    @contextmanager
    def counting(self) -> Iterator[None]:
        from apps.sources.kinds.base import Closing
        from apps.sources.sync import run

        real, reads = run.connector_for, self

        def wrapped(*, source: Any) -> Any:
            inner = real(source=source)

            class Counted:
                def items(self, *, known: Any) -> Any:
                    for item in inner.items(known=known):
                        reads.count += item.data is not None
                        yield item

                def fetch(self, item: Any) -> bytes:
                    reads.count += 1
                    return inner.fetch(item)

                def close(self) -> None:  # the SMB or IMAP session the sync would close
                    if isinstance(inner, Closing):
                        inner.close()

            return Counted()

        run.connector_for = wrapped
        try:
            yield
        finally:
            run.connector_for = real


def crawl_only(location: str, pages: int) -> str:
    """The crawl alone (fetch, robots.txt, links), without storing or processing anything."""
    from apps.sources.kinds.base import Limits
    from apps.sources.kinds.web import WebConnector

    limits = Limits(
        max_files=pages, max_file_bytes=25 << 20, max_pages=pages, max_depth=3, timeout_s=30
    )
    start = time.perf_counter()
    read = sum(1 for _ in WebConnector(location=location, limits=limits).items(known={}))
    seconds = time.perf_counter() - start
    return f"crawl alone: {read} pages in {seconds:.1f} s, {read / seconds:.1f} pages/s"


PROCESSING = [0.0]  # seconds spent in the corpus's document_process, summed


@contextmanager
def processing_timed() -> Iterator[None]:
    from apps.sources.sync import run

    real = run.document_process

    def timed(**kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return real(**kwargs)
        finally:
            PROCESSING[0] += time.perf_counter() - start

    run.document_process = timed
    try:
        yield
    finally:
        run.document_process = real


def timed_sync(source_id: int) -> tuple[float, int, Any]:
    from apps.sources.sync.run import source_sync

    reads = Reads()
    PROCESSING[0] = 0.0
    with reads.counting(), processing_timed():
        start = time.perf_counter()
        report = source_sync(source_id=source_id, wait=True)
        seconds = time.perf_counter() - start
    if report.error:
        raise SystemExit(f"the sync failed: {report.error}")
    return seconds, reads.count, report


def bench_source(label: str, make: Callable[[], tuple[str, str, dict[str, str]]]) -> None:
    from apps.corpus.models import Collection
    from apps.sources.models import SourceKind
    from apps.sources.sync.services import source_create

    kind, location, credentials = make()
    collection = Collection.objects.create(name=f"bench:sources-{uuid.uuid4().hex[:8]}")
    try:
        source = source_create(
            name=collection.name,
            kind=SourceKind(kind),
            location=location,
            collection=collection,
            credentials=credentials,
        )
        if kind == "web":
            from apps.sources.models import Source

            Source.objects.filter(pk=source.pk).update(max_pages=ARGS.pages, max_depth=3)
        first_s, first_reads, first = timed_sync(source.pk)
        processing_s = PROCESSING[0]
        second_s, second_reads, second = timed_sync(source.pk)
    finally:
        collection.delete()  # its sources, items and documents go with it
    print(
        f"| {label} | {first.seen} | {first_s:.1f} s | {processing_s:.1f} s "
        f"| {first.seen / first_s:.1f} | {first.seen / (first_s - processing_s):.0f} | {first_reads} "
        f"| {second_s:.2f} s | {second.seen / second_s:.0f} | {second.unchanged} | {second_reads} |"
    )
    if kind != "web" and second_s > TARGET_UNCHANGED_S:
        print(f"  unchanged sync over the {TARGET_UNCHANGED_S:.0f} s target")


def files_make(root: Path, count: int) -> list[tuple[str, bytes]]:
    return [
        (
            f"part{n // 100:02d}/note{n:05d}.md",
            f"# Note {n}\n\nNote {n} is about topic {n % 97}.".encode(),
        )
        for n in range(count)
    ]


def main(argv: Sequence[str] | None = None) -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--site", type=Path, default=PYTHON_DOCS)
    parser.add_argument("--kinds", default="folder,s3,smb,imap,web", help="comma-separated")
    ARGS = parser.parse_args(argv)
    kinds = set(ARGS.kinds.split(","))
    with tempfile.TemporaryDirectory(prefix="bench-sources-") as temp:
        root = Path(temp)
        django_setup(root / "media")
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        from apps.corpus.search.embedders import embedder_override
        from tests.conftest import CountingEmbedder
        from tests.sources import samba_dovecot, servers

        files = files_make(root, ARGS.files)
        print(
            "| source | items | first sync | of which processing | items/s | items/s without processing | reads | unchanged sync | items/s | unchanged | reads |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        with embedder_override(CountingEmbedder()):
            if "folder" in kinds:
                bench_source("folder", lambda: _folder(root, files))
            if "s3" in kinds:
                (root / "s3").mkdir()
                with servers.started(servers.seaweedfs_start(root / "s3")) as s3:
                    bench_source("S3 (SeaweedFS)", lambda: _bucket(s3, files))
            if "smb" in kinds:
                (root / "smb").mkdir()
                with servers.started(samba_dovecot.samba_start(root / "smb")) as smb:
                    bench_source("SMB (Samba)", lambda: _share(smb, files))
            if "imap" in kinds:
                (root / "imap").mkdir()
                with servers.started(samba_dovecot.dovecot_start(root / "imap")) as imap:
                    bench_source("IMAP (Dovecot)", lambda: _mailbox(imap, files))
            if "web" not in kinds:
                return
            if not (ARGS.site / "index.html").exists():
                raise SystemExit(f"{ARGS.site} has no index.html: install python3.11-doc")
            (root / "web").mkdir()
            with servers.started(servers.http_serve(root / "web", ARGS.site)) as web:
                bench_source("website (crawl)", lambda: ("web", f"{web.url}/index.html", {}))
                print(crawl_only(f"{web.url}/index.html", ARGS.pages))


def _folder(root: Path, files: list[tuple[str, bytes]]) -> tuple[str, str, dict[str, str]]:
    folder = root / "folder"
    for name, data in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return "folder", str(folder), {}


def _bucket(s3: Any, files: list[tuple[str, bytes]]) -> tuple[str, str, dict[str, str]]:
    from tests.sources import servers

    client: Any = servers.s3_client(s3)
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda f: client.put_object(
                    Bucket=servers.S3_BUCKET, Key=f"bench/{f[0]}", Body=f[1]
                ),
                files,
            )
        )
    keys = {"access_key": servers.S3_ACCESS_KEY, "secret_key": servers.S3_SECRET_KEY}
    return "s3", f"{s3.url}/{servers.S3_BUCKET}/bench", keys


def _share(smb: Any, files: list[tuple[str, bytes]]) -> tuple[str, str, dict[str, str]]:
    from tests.sources import samba_dovecot

    folder = smb.root / "share" / "bench"
    for name, data in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    keys = {"username": samba_dovecot.SMB_USER, "password": samba_dovecot.SMB_PASSWORD}
    return "smb", f"smb://127.0.0.1:{smb.port}/{samba_dovecot.SMB_SHARE}/bench", keys


def _mailbox(imap: Any, files: list[tuple[str, bytes]]) -> tuple[str, str, dict[str, str]]:
    """One message per file, appended over one connection as a mail client would."""
    from email.message import EmailMessage

    from imap_tools import MailBoxUnencrypted

    from tests.sources import samba_dovecot

    user, password = samba_dovecot.IMAP_USER, samba_dovecot.IMAP_PASSWORD
    with MailBoxUnencrypted("127.0.0.1", port=imap.port).login(user, password) as box:
        for name, data in files:
            message = EmailMessage()
            message["Subject"], message["From"] = name, "Bench <bench@example.org>"
            message.set_content(data.decode())
            box.append(message.as_bytes(), "INBOX")
    keys = {"username": user, "password": password}
    return "imap", f"imap://127.0.0.1:{imap.port}/INBOX", keys


ARGS: argparse.Namespace

if __name__ == "__main__":
    main()
