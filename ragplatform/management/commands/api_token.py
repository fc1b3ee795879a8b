from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ragplatform.api_tokens import TokenNotShown, UnknownUser, api_token_issue


class Command(BaseCommand):
    help = (
        "Print a new REST API token for a user who has none; --rotate replaces theirs. The key "
        "is shown only now (the database keeps its hash). Scripts send it as "
        "`Authorization: Token <key>`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--rotate", action="store_true", help="replace the token; the old one stops working"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            issued = api_token_issue(username=options["username"], rotate=options["rotate"])
        except (UnknownUser, TokenNotShown) as exc:
            raise CommandError(str(exc)) from exc
        if not issued.active:
            self.stderr.write(
                "This account is deactivated: its token is refused until it is active."
            )
        self.stdout.write(issued.key)
