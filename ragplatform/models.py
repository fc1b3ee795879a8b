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
