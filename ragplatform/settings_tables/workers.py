"""Task workers: their heartbeat, and the lease and sweep of documents being processed."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Float, Int

ROWS = (
    Float(
        "RAG_WORKER_HEARTBEAT_S",
        5.0,
        "How often a worker renews its heartbeat row.",
        low=0.5,
        high=300.0,
    ),
    Float(
        "RAG_WORKER_STALE_S",
        60.0,
        "A worker unheard of for this long counts as gone.",
        low=1.0,
        high=86_400.0,
    ),
    Float(
        "RAG_WORKER_DB_RETRY_MAX_S",
        8.0,
        "The longest wait between a worker's tries to reach a lost database.",
        low=0.5,
        high=300.0,
    ),
    # Renewed every third of it; the sweep requeues a document whose lease expired, up to
    # RAG_DOCUMENT_MAX_ATTEMPTS processing attempts, then marks it failed.
    Float(
        "RAG_DOCUMENT_LEASE_S",
        120.0,
        "The lease a document in processing holds.",
        low=3.0,
        high=86_400.0,
    ),
    Float(
        "RAG_DOCUMENT_SWEEP_S",
        30.0,
        "How often expired document leases are looked for.",
        low=1.0,
        high=3600.0,
    ),
    Int("RAG_DOCUMENT_MAX_ATTEMPTS", 3, "Processing attempts before a document fails.", minimum=1),
)
