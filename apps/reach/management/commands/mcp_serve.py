from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.reach.mcp_server.stdio import UnknownUser, stdio_serve, stdio_user_id


class Command(BaseCommand):
    help = (
        "Serve the MCP tools (search, ask, fetch, list_collections) over stdin/stdout as one "
        "user, for an MCP client that starts the server itself."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the account every tool acts as")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user_id = stdio_user_id(username=options["user"])
        except UnknownUser as exc:
            raise CommandError(str(exc)) from exc
        stdio_serve(user_id=user_id)  # stdout is the protocol's: nothing else is written there
