"""Answers in flight: a streaming turn's lease, abandonment, its followers and keepalives."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Float

ROWS = (
    # Renewed by its process every third of it; once it lapses the turn is failed as
    # interrupted (by the sweeper, or by a follower that notices first).
    Float("RAG_TURN_LEASE_S", 10.0, "A streaming turn's lease.", low=1.0, high=600.0),
    # A dropped client alone cancels nothing.
    Float(
        "RAG_TURN_ABANDON_S",
        300.0,
        "A turn nobody followed this long is cancelled.",
        low=5.0,
        high=86400.0,
    ),
    Float(
        "RAG_TURN_FOLLOW_CHECK_S",
        5.0,
        "A follower hearing nothing this long checks the lease.",
        low=0.05,
        high=300.0,
    ),
    Float(
        "RAG_KEEPALIVE_S",
        15.0,
        "How often idle WebSocket and SSE streams send a ping.",
        low=0.05,
        high=3600.0,
    ),
    # The coalescer cuts at boundaries; this timer shows a slow model's words all the same.
    Float(
        "RAG_STREAM_FLUSH_S",
        0.25,
        "The longest answer text waits before it is sent.",
        low=0.01,
        high=10.0,
    ),
)
