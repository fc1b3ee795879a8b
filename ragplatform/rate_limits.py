"""Rate limits counted in PostgreSQL, so they hold across every daphne process.

One row per key and fixed window; a single INSERT ... ON CONFLICT DO UPDATE adds the hits
only while the total stays within the limit, so two processes can never both take the last
slot (no read-then-write race).
"""

from __future__ import annotations

import datetime as dt

from django.db import connection
from django.utils import timezone

from ragplatform.models import RateCounter

_TAKE = f"""
    INSERT INTO {RateCounter._meta.db_table} AS c (key, window_start, hits)
    VALUES (%s, %s, %s)
    ON CONFLICT (key, window_start) DO UPDATE SET hits = c.hits + EXCLUDED.hits
    WHERE c.hits + EXCLUDED.hits <= %s
    RETURNING c.hits
"""  # noqa: S608 - the table name is our own model's, the values are parameters


def window_start(*, window: dt.timedelta, now: dt.datetime | None = None) -> dt.datetime:
    now = now or timezone.now()
    seconds = int(window.total_seconds())
    return dt.datetime.fromtimestamp(int(now.timestamp()) // seconds * seconds, tz=dt.UTC)


def rate_take(*, key: str, amount: int, limit: int, window: dt.timedelta) -> bool:
    """Count `amount` hits for `key` in the current window; False, counting nothing, when
    that would take the window past `limit`."""
    if amount > limit:
        return False
    start = window_start(window=window)
    with connection.cursor() as cursor:
        cursor.execute(_TAKE, [key, start, amount, limit])
        row = cursor.fetchone()
    if row is not None and row[0] == amount:
        # The window's first hits: the earlier windows of this key are spent, and dropping
        # them keeps the table small (once per window, not on every hit).
        RateCounter.objects.filter(key=key, window_start__lt=start).delete()
    return row is not None


def rate_count(*, key: str, window: dt.timedelta) -> int:
    """Hits counted for `key` in the current window."""
    row = RateCounter.objects.filter(key=key, window_start=window_start(window=window)).first()
    return row.hits if row else 0
