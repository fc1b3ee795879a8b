"""Sources that fill a collection by themselves: a folder, a bucket, a website, a WebDAV or
SMB share, a mailbox.

A `Source` says where to read and what to keep; each run is a `SourceSync` (the history); each
thing read there is a `SourceItem`, which remembers the change marker it had and the document
it became, so the next sync fetches only what changed and deletes what disappeared.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from apps.corpus.models import Collection, Document


class SourceKind(models.TextChoices):
    FOLDER = "folder", "Folder on this machine"
    S3 = "s3", "S3-compatible bucket"
    WEB = "web", "Website"
    WEBDAV = "webdav", "WebDAV share"
    SMB = "smb", "SMB shared folder"
    IMAP = "imap", "IMAP mailbox"


class SyncStatus(models.TextChoices):
    NEVER = "never", "Never synced"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    OK = "ok", "Synced"
    FAILED = "failed", "Failed"


class Source(models.Model):
    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=12, choices=SourceKind.choices)
    location = models.CharField(
        max_length=1000,
        help_text="A folder path, s3://bucket/prefix or http(s)://endpoint/bucket/prefix, a start "
        "URL or sitemap URL, a WebDAV folder URL, smb://host/share/folder, or "
        "imaps://host/mailbox (imap:// without TLS).",
    )
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="sources")
    # A Fernet token (credentials.py); never shown back, never logged.
    credentials_encrypted = models.TextField(blank=True, editable=False)
    include_patterns = models.TextField(blank=True, help_text="One glob per line; empty: all.")
    exclude_patterns = models.TextField(blank=True, help_text="One glob per line.")
    every_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Sync every this many minutes; empty: only by hand."
    )
    paused = models.BooleanField(default=False)
    # Limits; empty means the setting (RAG_SOURCE_MAX_FILES, RAG_MAX_UPLOAD_BYTES, ...).
    max_files = models.PositiveIntegerField(null=True, blank=True)
    max_file_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    max_pages = models.PositiveIntegerField(null=True, blank=True)
    max_depth = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=SyncStatus.choices, default=SyncStatus.NEVER)
    sync_started_at = models.DateTimeField(null=True, blank=True)
    sync_ended_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    failures_in_row = models.PositiveIntegerField(default=0)
    # While a sync runs: renewed by its process (ragplatform.leases); lapsed means it died.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=SourceKind.values), name="sources_source_kind_known"
            ),
            models.CheckConstraint(
                condition=Q(status__in=SyncStatus.values), name="sources_source_status_known"
            ),
            models.CheckConstraint(
                condition=~Q(status=SyncStatus.FAILED) | ~Q(last_error=""),
                name="sources_source_failed_has_error",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class SourceSync(models.Model):
    """One run of a source, with what it counted; a resumed run keeps its row and counts."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="syncs")
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=SyncStatus.choices, default=SyncStatus.RUNNING)
    error = models.TextField(blank=True)
    seen = models.PositiveIntegerField(default=0)
    added = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    renamed = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=SyncStatus.values), name="sources_sync_status_known"
            ),
            # At most one run of a source is open at a time.
            models.UniqueConstraint(
                fields=["source"],
                condition=Q(ended_at__isnull=True),
                name="sources_sync_one_open",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} at {self.started_at:%Y-%m-%d %H:%M}"


class SourceItem(models.Model):
    """One thing at the source (a path, a key, a URL) and the document it became."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=1000)
    # What changes when the item changes: mtime+size, an ETag, Last-Modified.
    marker = models.CharField(max_length=300, blank=True)
    content_sha256 = models.CharField(max_length=64, blank=True)
    location = models.CharField(max_length=1200, help_text="Where it lives: a path or a URL.")
    document = models.OneToOneField(
        Document, null=True, blank=True, on_delete=models.SET_NULL, related_name="source_item"
    )
    # The sync that last listed it: items another sync listed last are gone from the source.
    seen_in = models.ForeignKey(
        SourceSync, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    # What a kind keeps between syncs (a page's links, so an unchanged page is not re-read).
    extra = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source_id", "key"]
        constraints = [
            models.UniqueConstraint(fields=["source", "key"], name="sources_item_unique_key"),
        ]
        indexes = [models.Index(fields=["source", "content_sha256"], name="sources_item_hash_idx")]

    def __str__(self) -> str:
        return self.key
