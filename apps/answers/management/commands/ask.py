from __future__ import annotations

import asyncio
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.conversations.selectors import NotFound
from apps.answers.events import EventType
from apps.answers.models import TurnClient
from apps.answers.turn.entry import conversation_id_parse, turn_events, turn_open
from apps.answers.turn.services import InvalidQuestion


class Command(BaseCommand):
    help = "Run one full turn through the same entry the web uses; print its events."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", help="the question")
        parser.add_argument("--conversation", help="continue this conversation (UUID)")
        parser.add_argument("--collection", action="append", default=[], help="limit to these")
        parser.add_argument("--json", action="store_true", help="one JSON event per line")

    def handle(self, *args: Any, **options: Any) -> None:
        asyncio.run(self._ask(options))

    async def _ask(self, options: dict[str, Any]) -> None:
        try:
            # No user: the operator at the command line (no rate limit, any conversation).
            opened = await turn_open(
                user_id=None,
                conversation_id=conversation_id_parse(options["conversation"]),
                question=options["text"],
                collection_names=options["collection"],
                client=TurnClient.COMMAND,
            )
        except (InvalidQuestion, NotFound) as exc:
            raise CommandError(str(exc)) from exc
        async for envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
            if options["json"]:
                self.stdout.write(json.dumps(envelope, ensure_ascii=False))
            else:
                self._human(envelope["type"], envelope["data"])

    def _human(self, type_: str, data: dict[str, Any]) -> None:
        if type_ == EventType.TOKEN:
            self.stdout.write(data["text"], ending="")
        elif type_ == EventType.CITATION:
            page = f", p. {data['page']}" if data.get("page") else ""
            self.stdout.write(f" [{data['alias']}: {data['title']}{page}]", ending="")
        elif type_ == EventType.CLASSIFICATION:
            self.stdout.write(
                f"({data['intent']}, {data['tier']}, confidence {data['confidence']:.2f}, {data['action']})"
            )
        elif type_ == EventType.SEARCH_RESULTS:
            for result in data["results"]:
                self.stdout.write(f"{result['rank']:>2}. {result['title']} ({result['score']:.2f})")
        elif type_ == EventType.CLARIFICATION:
            self.stdout.write(data["question"])
        elif type_ == EventType.CONFIDENCE:
            self.stdout.write(f"\nconfidence: {data['value']:.2f} ({data['band']})")
        elif type_ == EventType.FOLLOWUPS:
            for question in data["questions"]:
                self.stdout.write(f"  -> {question}")
        elif type_ == EventType.FAILED:
            raise CommandError(f"{data['code']}: {data['message']}")
