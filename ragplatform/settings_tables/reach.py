"""Other clients' doors: the OpenAI-compatible endpoint, the MCP server and the embeddable
widget (docs/guide/16)."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Int, List, Secret, Text

ROWS = (
    Int("RAG_REACH_MAX_MESSAGES", 100, "Messages one chat completion may carry.", minimum=1),
    # The question itself is held to RAG_MAX_QUESTION_CHARS as everywhere else.
    Int(
        "RAG_REACH_MAX_MESSAGE_CHARS",
        100_000,
        "The longest message of a chat completion.",
        minimum=100,
    ),
    Int(
        "RAG_MCP_SEARCH_LIMIT", 10, "Passages the MCP search tool returns unless asked.", minimum=1
    ),
    Int(
        "RAG_MCP_SEARCH_MAX_LIMIT",
        50,
        "The most passages the MCP search tool returns.",
        minimum=1,
    ),
    Int(
        "RAG_MCP_FETCH_MAX_CHARS",
        200_000,
        "The longest document text the MCP fetch tool returns.",
        minimum=1000,
    ),
    # The widget: off until a key, an account and at least one origin are set.
    List(
        "RAG_WIDGET_ALLOWED_ORIGINS",
        (),
        "Origins of the pages that may embed the answer widget.",
    ),
    Secret("RAG_WIDGET_KEY", "The widget's publishable key."),
    Text(
        "RAG_WIDGET_USER", "", "The account whose access rules and rate limit the widget asks with."
    ),
    List("RAG_WIDGET_COLLECTIONS", (), "The collections the widget answers from."),
)
