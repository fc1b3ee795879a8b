"""Conversations: the chat page's sidebar and search, feedback, and how long deleted ones stay."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Int

ROWS = (
    Int(
        "RAG_DELETED_CONVERSATION_RETENTION_DAYS",
        365,
        "Days the audit keeps a deleted conversation; 0 keeps it forever.",
        minimum=0,
    ),
    Int("RAG_SIDEBAR_CONVERSATIONS", 100, "Conversations the sidebar lists.", minimum=1),
    Int("RAG_CONVERSATION_SEARCH_MAX_CHARS", 200, "The longest conversation search.", minimum=1),
    Int("RAG_FEEDBACK_COMMENT_MAX_CHARS", 2000, "The longest feedback comment.", minimum=1),
)
