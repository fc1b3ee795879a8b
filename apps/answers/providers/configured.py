"""The chat model, the reranker and the keyword leg's pruning named by settings (kept apart from the registry so light
callers, such as the post-turn task or an evaluation command, need not import every composer)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from apps.answers.providers.chat import ChatMessage, ChatModel, ChatSettings
from apps.answers.providers.openai_chat import OpenAIChatModel
from apps.answers.retrieval.rerank import NoReranker, RemoteReranker, Reranker
from apps.answers.routing.llm import JsonChatModel
from apps.corpus.search.legs import KeywordPruning

logger = logging.getLogger(__name__)


def chat_model_configured() -> ChatModel | None:
    if not (settings.OPENAI_BASE_URL and settings.RAG_CHAT_MODEL):
        return None
    return OpenAIChatModel(
        ChatSettings(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            model=settings.RAG_CHAT_MODEL,
            timeout_s=settings.RAG_CHAT_TIMEOUT_S,
            # Never longer than the whole call may take.
            first_token_timeout_s=min(
                settings.RAG_CHAT_FIRST_TOKEN_TIMEOUT_S, settings.RAG_CHAT_TIMEOUT_S
            ),
        )
    )


def reranker_configured(mode: str | None = None) -> Reranker:
    """The reranker for RAG_RERANK, or for `mode` where a command overrides it.

    "remote" calls RAG_RERANK_BASE_URL; without one nothing reranks (the fused order stands),
    so a caller that must rerank checks for `NoReranker`.
    """
    if (mode or settings.RAG_RERANK) != "remote":
        return NoReranker()
    if not settings.RAG_RERANK_BASE_URL:
        logger.warning("A remote reranker needs RAG_RERANK_BASE_URL; keeping the fused order")
        return NoReranker()
    return RemoteReranker(
        base_url=settings.RAG_RERANK_BASE_URL,
        model=settings.RAG_RERANK_MODEL,
        api_key=settings.OPENAI_API_KEY,
        timeout_s=settings.RAG_RERANK_TIMEOUT_S,
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


def keyword_pruning_configured(budget: int | None = None) -> KeywordPruning | None:
    """RAG_KEYWORD_POSTINGS_BUDGET and RAG_KEYWORD_RESCORE_DEPTH, or `budget` where a command
    overrides the first; a budget of 0 reads every posting (exact BM25)."""
    budget = settings.RAG_KEYWORD_POSTINGS_BUDGET if budget is None else budget
    if budget == 0:
        return None
    return KeywordPruning(postings_budget=budget, rescore_depth=settings.RAG_KEYWORD_RESCORE_DEPTH)
