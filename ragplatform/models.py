"""Project-wide tables: fixed-window counters for rate limits shared by every process."""

from __future__ import annotations

from django.db import models


class RateCounter(models.Model):
    """Hits for one key in one window; only `rate_take` writes it, atomically."""

    key = models.CharField(max_length=200)
    window_start = models.DateTimeField()
    hits = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key", "window_start"], name="rate_counter_one_row_per_window"
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} @ {self.window_start:%Y-%m-%d %H:%M}: {self.hits}"


class WorkerHeartbeat(models.Model):
    """One running task worker (`manage.py worker`), renewed by the worker itself every
    RAG_WORKER_HEARTBEAT_S; a row whose `last_seen_at` is old belongs to a worker that died."""

    worker_id = models.CharField(max_length=64, unique=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    current_task = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name = "task worker"
        indexes = [models.Index(fields=["last_seen_at"], name="worker_heartbeat_seen_idx")]

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}"


class StoredFile(models.Model):
    """The bytes of one file kept by `storage.DatabaseStorage`, so every process that reaches
    the database reads what any other process stored, with no shared folder."""

    name = models.CharField(max_length=700, unique=True)
    content = models.BinaryField()
    size = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name
