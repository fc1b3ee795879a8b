from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.analytics.selectors import local_period
from apps.analytics.services import daily_counts_refresh_range


class Command(BaseCommand):
    help = (
        "Rebuild the dashboard's daily turn counts from the turn log for the last N local days "
        "(e.g. after a restore); safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=30, help="days ending today (default 30)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["days"] < 1:
            raise CommandError("--days must be at least 1")
        first, last = local_period(days=options["days"])
        counted = daily_counts_refresh_range(first=first, last=last)
        turns = sum(c.turns for c in counted)
        if options["json"]:
            days = [{**asdict(c), "day": c.day.isoformat()} for c in counted]
            summary = {"first": first.isoformat(), "last": last.isoformat(), "turns": turns}
            self.stdout.write(json.dumps({**summary, "days": days}))
        else:
            self.stdout.write(f"Refreshed {len(counted)} days, {first} to {last}: {turns} turns")
