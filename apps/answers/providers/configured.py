"""The chat model named by settings, if any (kept apart from the registry so light callers,
such as the post-turn task, need not import every composer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from apps.answers.providers.chat import ChatMessage, ChatModel, ChatSettings
from apps.answers.providers.openai_chat import OpenAIChatModel
from apps.answers.routing.llm import JsonChatModel


def chat_model_configured() -> ChatModel | None:
    if not (settings.OPENAI_BASE_URL and settings.RAG_CHAT_MODEL):
        return None
    return OpenAIChatModel(
        ChatSettings(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            model=settings.RAG_CHAT_MODEL,
            timeout_s=settings.RAG_CHAT_TIMEOUT_S,
        )
    )


class _JsonChatAdapter:
    """The router's LLM classifier speaks plain dict messages; the provider takes ChatMessage."""

    def __init__(self, chat: ChatModel) -> None:
        self.chat = chat
        self.name = chat.name

    async def complete_json(
        self,
        *,
        messages: Sequence[dict[str, str]],
        schema: Mapping[str, Any],
        schema_name: str,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> str:
        return await self.chat.complete_json(
            messages=[ChatMessage(m["role"], m["content"]) for m in messages],  # type: ignore[arg-type]
            schema=schema,
            schema_name=schema_name,
            temperature=temperature,
            max_tokens=max_tokens,
        )


def json_chat_adapter(chat: ChatModel) -> JsonChatModel:
    return _JsonChatAdapter(chat)
