from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ragplatform.settings_tables.guide import GUIDE, guide_write


class Command(BaseCommand):
    help = (
        "Write the Default and Allowed columns of the configuration guide "
        "(docs/guide/10-configuration.md) from the settings tables in ragplatform/settings_tables/."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="change nothing; fail if the guide is out of date"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        fresh = guide_write(check=options["check"])
        if options["check"] and not fresh:
            raise CommandError(f"{GUIDE.name} is out of date: run `manage.py settings_guide`")
        self.stdout.write(f"{GUIDE.name} is up to date" if fresh else f"{GUIDE.name} rewritten")
