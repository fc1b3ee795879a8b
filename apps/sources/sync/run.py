"""A sync from start to end: claim the source, list it, sync each item, delete what is gone.

Only a complete listing deletes anything: a listing that failed (wrong credentials, host
gone, a timeout) or passed the files limit ends the run with an error and keeps every stored
document. A killed run leaves its source `running` under a lease that lapses; the next claim
resumes the same run, skipping the items it already did (each was one transaction).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from apps.corpus.ingestion.services import document_process
from apps.corpus.models import Document, DocumentStatus
from apps.sources.kinds.base import Closing, Connector, Known, Listed, Patterns, SourceError
from apps.sources.kinds.registry import connector_for, source_limits
from apps.sources.models import Source, SourceSync
from apps.sources.sync.items import (
    ItemContext,
    item_sync,
    item_unchanged,
    items_gone_delete,
    items_known,
    items_unchanged_mark,
    items_vanished,
    run_count,
)
from apps.sources.sync.leases import LeaseKeeper, SyncLost, sync_claim, sync_end

logger = logging.getLogger(__name__)
UNCHANGED_BATCH = 500  # items marked seen per statement in an unchanged stretch of a listing


@dataclass(frozen=True)
class SyncReport:
    source: str
    status: str
    error: str
    seen: int
    added: int
    updated: int
    renamed: int
    unchanged: int
    deleted: int
    failed: int


def source_sync(*, source_id: int, wait: bool = False) -> SyncReport:
    """Run (or resume) the source's sync. `wait` processes its documents in this process
    (tests, `source_sync --wait`); otherwise the task workers do. Raises SyncBusy."""
    run = sync_claim(source_id=source_id)
    source = Source.objects.select_related("collection").get(pk=source_id)
    try:
        error = _run(source=source, run=run, wait=wait)
    except SyncLost as exc:
        error = str(exc)
    except Exception:
        logger.exception("The sync of source %s failed unexpectedly", source_id)
        error = "The sync failed unexpectedly; the server log has the details."
    sync_end(run=run, error=error)
    if not SourceSync.objects.filter(pk=run.pk).exists():  # the source was removed
        return SyncReport(source.name, "failed", error, 0, 0, 0, 0, 0, 0, 0)
    return sync_report(run_id=run.pk)


def _run(*, source: Source, run: SourceSync, wait: bool) -> str:
    try:
        connector = connector_for(source=source)
    except SourceError as exc:
        return str(exc)
    try:
        return _run_with(source=source, run=run, wait=wait, connector=connector)
    finally:
        if isinstance(connector, Closing):
            connector.close()


def _run_with(*, source: Source, run: SourceSync, wait: bool, connector: Connector) -> str:
    keeper = LeaseKeeper(source_id=source.pk)
    limits = source_limits(source=source)
    patterns = Patterns.from_text(include=source.include_patterns, exclude=source.exclude_patterns)
    stored = items_known(source=source)
    known = {key: Known(item.marker, item.extra) for key, item in stored.items()}
    try:
        listing = _listing(connector.items(known=known), patterns, limits.max_files + 1)
    except SourceError as exc:
        return str(exc)
    truncated = len(listing) > limits.max_files
    listing = listing[: limits.max_files]
    vanished = items_vanished(source=source, listed_keys={item.key for item in listing})
    ctx = ItemContext(source=source, run=run, connector=connector, vanished=vanished)
    unchanged: list[int] = []
    for listed in listing:
        item = stored.get(listed.key)
        if item is not None and item.seen_in_id == run.pk:
            continue  # done before this run was resumed
        if item is not None and item_unchanged(listed=listed, stored=item):
            unchanged.append(item.pk)
            if len(unchanged) >= UNCHANGED_BATCH:
                keeper.keep()
                items_unchanged_mark(ctx=ctx, item_ids=unchanged)
                unchanged = []
            continue
        keeper.keep()
        run_count(run=run, outcome=item_sync(ctx=ctx, listed=listed, stored=item))
    items_unchanged_mark(ctx=ctx, item_ids=unchanged)
    if wait:
        _process_now(source=source, keeper=keeper)
    if truncated:
        return (
            f"The source lists more than {limits.max_files:,} files (the limit); the first "
            f"{limits.max_files:,} were synced and nothing was deleted."
        )
    run_count(run=run, outcome="deleted", by=items_gone_delete(source=source, run=run))
    return ""


def _listing(items: object, patterns: Patterns, cap: int) -> list[Listed]:
    listing: list[Listed] = []
    for listed in items:  # type: ignore[attr-defined]
        if patterns.admits(listed.key):
            listing.append(listed)
            if len(listing) >= cap:
                break
    return listing


def _process_now(*, source: Source, keeper: LeaseKeeper) -> None:
    """Everything this source's syncs left pending, those of a killed run included."""
    documents = Document.objects.filter(source_item__source=source, status=DocumentStatus.PENDING)
    for document_id in documents.values_list("pk", flat=True):
        keeper.keep()
        document_process(document_id=document_id)


def sync_report(*, run_id: int) -> SyncReport:
    run = SourceSync.objects.select_related("source").get(pk=run_id)
    return SyncReport(
        source=run.source.name,
        status=run.status,
        error=run.error,
        seen=run.seen,
        added=run.added,
        updated=run.updated,
        renamed=run.renamed,
        unchanged=run.unchanged,
        deleted=run.deleted,
        failed=run.failed,
    )
