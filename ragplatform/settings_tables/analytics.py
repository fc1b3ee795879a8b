"""Analytics: the dashboard's longest period and the offline category classifier."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Float, Int

ROWS = (
    Int("RAG_DASHBOARD_MAX_DAYS", 3 * 366, "The longest period the dashboard shows.", minimum=1),
    Float(
        "RAG_CATEGORY_THRESHOLD",
        0.82,
        "How similar a conversation must be to a category.",
        low=0.0,
        high=1.0,
    ),
)
