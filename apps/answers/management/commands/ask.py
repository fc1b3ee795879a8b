from __future__ import annotations

import asyncio
import json
from typing import Any

from asgiref.sync import sync_to_async
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.events import EventType
from apps.answers.models import Conversation
from apps.answers.providers.registry import providers_default
from apps.answers.services import InvalidQuestion, conversation_start, turn_start
from apps.answers.turn.run import turn_run
from apps.corpus.search import SearchFilters
from apps.corpus.selectors import UnknownCollection, collection_ids_resolve


class Command(BaseCommand):
    help = "Run one full turn through the same service the web uses; print its events."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", help="the question")
        parser.add_argument("--conversation", help="continue this conversation (UUID)")
        parser.add_argument("--collection", action="append", default=[], help="limit to these")
        parser.add_argument("--json", action="store_true", help="one JSON event per line")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            collection_ids = collection_ids_resolve(names=options["collection"])
            conversation = self._conversation(options["conversation"])
            turn = turn_start(conversation=conversation, question=options["text"])
        except (InvalidQuestion, UnknownCollection) as exc:
            raise CommandError(str(exc)) from exc
        asyncio.run(self._stream(turn.pk, SearchFilters(collection_ids=collection_ids), options))

    def _conversation(self, conversation_id: str | None) -> Conversation:
        if not conversation_id:
            return conversation_start(user_id=None)
        try:
            return Conversation.objects.get(pk=conversation_id)
        except (Conversation.DoesNotExist, ValueError) as exc:
            raise CommandError(f"No conversation {conversation_id}") from exc

    async def _stream(self, turn_id: int, filters: SearchFilters, options: dict[str, Any]) -> None:
        providers = await sync_to_async(providers_default)()
        async for envelope in turn_run(turn_id=turn_id, providers=providers, filters=filters):
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
