"""Sources: the key their credentials are encrypted with, their limits, lease and schedule."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Float, Int, List, Secret

ROWS = (
    # Derived from DJANGO_SECRET_KEY when unset; changing it makes stored credentials unreadable.
    Secret(
        "RAG_SOURCE_CREDENTIALS_KEY",
        "The key source credentials are encrypted with.",
        shown_default="derived from DJANGO_SECRET_KEY",
    ),
    Int("RAG_SOURCE_MAX_FILES", 10_000, "The most items one sync of a source takes.", minimum=1),
    Int("RAG_SOURCE_MAX_PAGES", 500, "The most pages one crawl of a website reads.", minimum=1),
    Int("RAG_SOURCE_MAX_DEPTH", 3, "How many links deep a website crawl goes.", minimum=0),
    Float(
        "RAG_SOURCE_TIMEOUT_S",
        30.0,
        "How long a source's server may take to answer.",
        low=1.0,
        high=600.0,
    ),
    Int(
        "RAG_SOURCE_IMAP_BATCH",
        100,
        "How many new messages one IMAP fetch asks for.",
        minimum=1,
    ),
    List(
        "RAG_SOURCE_WEB_ALLOWED_NETWORKS",
        (),
        "Internal networks a website source may crawl anyway.",
    ),
    Float("RAG_SOURCE_LEASE_S", 120.0, "The lease a running sync holds.", low=3.0, high=86_400.0),
    Float(
        "RAG_SOURCE_SWEEP_S",
        30.0,
        "How often the workers look for sources due to sync.",
        low=1.0,
        high=3600.0,
    ),
    Int(
        "RAG_SOURCE_FAILURES_SHOWN",
        3,
        "Failed syncs in a row after which a source is shown as failing.",
        minimum=1,
    ),
)
