"""The database: where it is, the connection pool, the threads answers make their calls on."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Bool, Float, Int, Text

ROWS = (
    Text(
        "DATABASE_URL",
        "",
        "A postgresql:// URL; unset, the embedded server under the data folder.",
        setting=None,
        shown_default="the embedded server",
        shown_allowed="a postgresql:// URL",
    ),
    # One bounded pool of connections per process, not one per thread: under ASGI each
    # request's sync code has a thread of its own, so a burst would open a connection each.
    Bool("DATABASE_POOL", True, "Each process borrows its connections from one pool."),
    Int(
        "DATABASE_POOL_MIN_SIZE",
        2,
        "Connections a pool keeps open when idle.",
        minimum=0,
        setting=None,
    ),
    Int(
        "DATABASE_POOL_MAX_SIZE",
        12,
        "The most connections one process opens.",
        minimum=1,
        setting=None,
        also="at least DATABASE_POOL_MIN_SIZE",
    ),
    Float(
        "DATABASE_POOL_TIMEOUT_S",
        20.0,
        "How long a request waits for a pooled connection.",
        low=0.5,
        high=600.0,
        setting=None,
    ),
    Int(
        "DATABASE_CONN_MAX_AGE",
        0,
        "Without the pool: seconds a connection is kept for reuse.",
        minimum=0,
        setting=None,
        also="0 while DATABASE_POOL is on",
    ),
    Int(
        "RAG_EMBEDDED_PG_MAX_CONNECTIONS",
        200,
        "The embedded server's max_connections.",
        minimum=20,
        setting=None,
    ),
    # Apart for searches, so that quick writes such as a first event never queue behind them.
    Int("RAG_DB_THREADS", 4, "Threads per process for the database calls of answers.", minimum=1),
    Int("RAG_DB_SEARCH_THREADS", 2, "Threads per process for answers' searches.", minimum=1),
)
