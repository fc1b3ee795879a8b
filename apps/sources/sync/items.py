"""One listed item against what the last sync stored: unchanged, added, updated, renamed or
failed; and, once the listing is complete, the items that disappeared.

Each item is one transaction (its document and its row together), so a sync killed between
two items resumes with nothing half-stored. Documents go through the corpus's own ingestion
(`files_ingest`), exactly like an upload; a refused or unreadable item keeps the document it
had.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from django.db import transaction
from django.db.models import F

from apps.corpus.models import Document
from apps.corpus.uploads.batches import IncomingFile, files_ingest
from apps.sources.kinds.base import Connector, ItemError, Listed
from apps.sources.models import Source, SourceItem, SourceKind, SourceSync
from apps.sources.sync.leases import SyncLost

MAX_NAME = 240  # well inside Document.filename, with room for the collection's other names
MAX_KEY = SourceItem._meta.get_field("key").max_length or 1000


class Outcome(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    RENAMED = "renamed"
    UNCHANGED = "unchanged"
    FAILED = "failed"


@dataclass
class ItemContext:
    source: Source
    run: SourceSync
    connector: Connector
    vanished: dict[str, SourceItem]  # content sha256 -> an item the listing no longer has


def document_name(*, source: Source, key: str) -> str:
    """The document's filename: the item's path, its folders kept (`a › b.md`), so two files
    of one name in two folders stay two documents; a page gets `.html` to be parsed as one."""
    if source.kind == SourceKind.WEB:
        parts = urlsplit(key)
        key = (parts.netloc + parts.path).rstrip("/") or parts.netloc
        if parts.path.endswith("/") or not parts.path:
            key += "/index"
        if parts.query:
            key += "-" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
        if not key.lower().endswith((".html", ".htm")):
            key += ".html"
    name = " › ".join(part for part in key.split("/") if part)
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:10]
        name = f"{digest}…{name[-(MAX_NAME - 11) :]}"
    return name


def item_sync(*, ctx: ItemContext, listed: Listed, stored: SourceItem | None) -> Outcome:
    """An item the listing alone could not call unchanged (`item_unchanged`): fetch and compare."""
    if error := str(listed.extra.get("error", "")) or _key_error(listed.key):
        return _failed(ctx, listed, stored, error)
    try:
        data = listed.data if listed.data is not None else ctx.connector.fetch(listed)
    except ItemError as exc:
        return _failed(ctx, listed, stored, str(exc))
    sha = hashlib.sha256(data).hexdigest()
    if stored and stored.document_id and sha == stored.content_sha256 and not stored.error:
        _store(ctx, listed, stored, sha=sha, document_id=stored.document_id)
        return Outcome.UNCHANGED
    if stored is None and (moved := ctx.vanished.pop(sha, None)) is not None:
        return _rename(ctx, listed, moved)
    return _ingest(ctx, listed, stored, data=data, sha=sha)


def item_unchanged(*, listed: Listed, stored: SourceItem | None) -> bool:
    """The listing alone says so (same marker, or HTTP 304): no content is fetched."""
    if stored is None or not stored.document_id or stored.error:
        return False
    return listed.unchanged or bool(listed.marker and listed.marker == stored.marker)


def _key_error(key: str) -> str:
    return f"The name is longer than {MAX_KEY} characters." if len(key) > MAX_KEY else ""


def _ingest(
    ctx: ItemContext, listed: Listed, stored: SourceItem | None, *, data: bytes, sha: str
) -> Outcome:
    name = document_name(source=ctx.source, key=listed.key)
    collection = ctx.source.collection
    theirs = Document.objects.filter(collection=collection, filename=name)
    if stored and stored.document_id:
        theirs = theirs.exclude(pk=stored.document_id)
    if theirs.exists():
        message = f"A document named {name!r} that is not from this source is in the collection."
        return _failed(ctx, listed, stored, message)
    with transaction.atomic():
        _source_held(ctx)
        incoming = IncomingFile(listed.location, name, lambda: data)
        (outcome,) = files_ingest(files=[incoming], collection=collection, wait=False)
        if outcome.document is None:
            transaction.set_rollback(True)
            refused = outcome.message
        else:
            refused = ""
            _store(ctx, listed, stored, sha=sha, document_id=outcome.document.pk)
    if refused:
        return _failed(ctx, listed, stored, refused)
    return Outcome.UPDATED if stored and stored.document_id else Outcome.ADDED


def _rename(ctx: ItemContext, listed: Listed, moved: SourceItem) -> Outcome:
    """Same bytes under a new key: the document follows, its chunks and vectors untouched."""
    name = document_name(source=ctx.source, key=listed.key)
    taken = Document.objects.filter(collection=ctx.source.collection, filename=name)
    with transaction.atomic():
        _source_held(ctx)
        if moved.document_id and not taken.exclude(pk=moved.document_id).exists():
            Document.objects.filter(pk=moved.document_id).update(filename=name)
        moved.key = listed.key
        _store(ctx, listed, moved, sha=moved.content_sha256, document_id=moved.document_id)
    return Outcome.RENAMED


def _source_held(ctx: ItemContext) -> None:
    """Lock the source's row for this item's transaction: a source deleted meanwhile stops
    the sync here (SyncLost) instead of leaving an item behind that names it."""
    if not Source.objects.select_for_update(no_key=True).filter(pk=ctx.source.pk).exists():
        raise SyncLost("The source was removed while it synced.")


def _store(
    ctx: ItemContext, listed: Listed, item: SourceItem | None, *, sha: str, document_id: int | None
) -> None:
    item = item or SourceItem(source=ctx.source, key=listed.key)
    item.key, item.marker, item.location = listed.key, listed.marker, listed.location[:1200]
    item.content_sha256, item.document_id, item.error = sha, document_id, ""
    item.seen_in, item.extra = ctx.run, dict(listed.extra)
    with transaction.atomic():
        _source_held(ctx)
        item.save()


def _failed(ctx: ItemContext, listed: Listed, stored: SourceItem | None, error: str) -> Outcome:
    """Recorded on the item; the document it had (if any) stays as it was."""
    item = stored or SourceItem(source=ctx.source, key=listed.key[:MAX_KEY])
    item.location, item.error, item.seen_in = listed.location[:1200], error[:2000], ctx.run
    with transaction.atomic():
        _source_held(ctx)
        item.save()
    return Outcome.FAILED


def items_vanished(*, source: Source, listed_keys: set[str]) -> dict[str, SourceItem]:
    """Stored items the listing no longer has, by content hash (rename candidates)."""
    gone = SourceItem.objects.filter(source=source, document__isnull=False).exclude(
        content_sha256=""
    )
    return {i.content_sha256: i for i in gone.iterator() if i.key not in listed_keys}


def items_gone_delete(*, source: Source, run: SourceSync) -> int:
    """Delete what the source no longer has: its items and their documents (and with them
    their chunks, out of search) in one transaction."""
    with transaction.atomic():
        gone = SourceItem.objects.filter(source=source).exclude(seen_in=run)
        document_ids = list(gone.exclude(document__isnull=True).values_list("document", flat=True))
        count = gone.count()
        Document.objects.filter(pk__in=document_ids).delete()
        SourceItem.objects.filter(source=source).exclude(seen_in=run).delete()
    return count


def run_count(*, run: SourceSync, outcome: Outcome | str, by: int = 1) -> None:
    field = str(outcome)
    counts = {field: F(field) + by}
    if isinstance(outcome, Outcome):
        counts["seen"] = F("seen") + by
    SourceSync.objects.filter(pk=run.pk).update(**counts)


def items_unchanged_mark(*, ctx: ItemContext, item_ids: list[int]) -> None:
    """Items the listing called unchanged, marked seen and counted in one transaction: an
    unchanged sync costs a few statements per batch, not per item."""
    if not item_ids:
        return
    with transaction.atomic():
        _source_held(ctx)
        SourceItem.objects.filter(pk__in=item_ids).update(seen_in=ctx.run)
        run_count(run=ctx.run, outcome=Outcome.UNCHANGED, by=len(item_ids))


def items_known(*, source: Source) -> Mapping[str, SourceItem]:
    return {item.key: item for item in SourceItem.objects.filter(source=source).iterator()}
