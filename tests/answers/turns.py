"""Whole turns run in tests, with the chat client a real (or unreachable) model server is
asked through."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync

from apps.answers.models import Conversation, Turn
from apps.answers.providers.chat import ChatSettings
from apps.answers.providers.openai_chat import OpenAIChatModel
from apps.answers.providers.registry import Providers
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import turn_start

QUESTION = "How many days of annual leave do employees get?"


def chat_model(base_url: str, model: str, **overrides: Any) -> OpenAIChatModel:
    options = {"timeout_s": 120.0, **overrides}
    return OpenAIChatModel(ChatSettings(base_url=base_url, api_key="", model=model, **options))


def turn_events(providers: Providers, question: str) -> tuple[Turn, list[dict[str, Any]]]:
    turn = turn_start(conversation=Conversation.objects.create(), question=question)

    async def collect() -> list[dict[str, Any]]:
        return [dict(e) async for e in turn_run(turn_id=turn.pk, providers=providers)]

    events = async_to_sync(collect)()
    turn.refresh_from_db()
    return turn, events
