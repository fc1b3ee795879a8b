"""The post-turn step: conversation title, categories (closed list) and attributed sources.
Without a model the title is the question's topic (`titles.py`).

Runs after the answer is stored, as a background task; best effort: a failure is logged
loudly and never touches the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from asgiref.sync import async_to_sync
from django.conf import settings

from apps.analytics.titles import title_from_question
from apps.answers.conversations.selectors import conversation_history
from apps.answers.models import Turn
from apps.answers.providers.chat import (
    ChatError,
    ChatMessage,
    ChatModel,
    ChatTimeout,
    reply_json_object,
)
from apps.answers.routing.types import HistoryMessage, Intent, TurnAction
from apps.corpus.search.embedders import Embedder
from apps.corpus.text import detect_language, is_greeting, words

logger = logging.getLogger(__name__)
MAX_CATEGORIES = 5


@dataclass(frozen=True)
class CategoryOption:
    id: int
    name: str
    description: str


@dataclass(frozen=True)
class PostTurnDecision:
    title: str | None
    categories: tuple[tuple[int, float], ...]  # (category id, score), best first, at most 5
    attributed_aliases: tuple[str, ...]
    classifier: str


def is_small_talk(turn: Turn) -> bool:
    """Greetings, thanks and questions about the assistant: no topic to title or categorise.
    The step leaves the conversation's title and categories as they are for such a turn."""
    if turn.action == TurnAction.CHAT or turn.intent == Intent.CONVERSATIONAL:
        return True
    return is_greeting(turn.question) and len(words(turn.question)) <= 4


def title_in_language(title: str | None, *, question: str) -> str | None:
    """The model's title, unless it is in another language than the question (small models
    title Persian conversations in English): then the question's own key phrase."""
    if title and detect_language(question) == "fa" and detect_language(title) != "fa":
        return title_from_question(question)
    return title


def categories_by_similarity(
    *,
    text: str,
    options: Sequence[CategoryOption],
    embedder: Embedder,
    threshold: float,
) -> tuple[tuple[int, float], ...]:
    if not options or not text.strip():
        return ()
    query = embedder.embed_query(text)
    descriptions = _description_vectors(embedder, tuple((o.name, o.description) for o in options))
    scores = descriptions @ query
    ranked = sorted(zip((o.id for o in options), scores.tolist(), strict=True), key=lambda p: -p[1])
    return tuple((cid, round(float(s), 4)) for cid, s in ranked if s >= threshold)[:MAX_CATEGORIES]


# Category descriptions change rarely; embed each list once per process.
_vector_cache: dict[tuple[str, tuple[tuple[str, str], ...]], np.ndarray] = {}


def _description_vectors(embedder: Embedder, items: tuple[tuple[str, str], ...]) -> np.ndarray:
    key = (embedder.model_id, items)
    if key not in _vector_cache:
        texts = [f"{name}: {description}" for name, description in items]
        _vector_cache[key] = np.asarray(embedder.embed_passages(texts))
    return _vector_cache[key]


def post_turn_prompt(
    *,
    turn: Turn,
    history: Sequence[HistoryMessage],
    options: Sequence[CategoryOption],
    aliases: Sequence[str],
) -> list[ChatMessage]:
    window = "\n".join(f"{m.role}: {m.text}" for m in history)
    names = "\n".join(f"- {o.name}: {o.description}" for o in options)
    system = (
        "You label conversations for analytics. Reply with JSON only. title: a short title "
        "(max 8 words) for the whole conversation, in the language of the latest question "
        "(Persian for a Persian question), or null for greetings and small talk. categories: up to 5 names from the list that apply to the whole "
        "conversation. attributed: the source aliases the answer relied on (only when it cites none)."
    )
    user = (
        f"Categories:\n{names}\n\nEarlier messages:\n{window or '(none)'}\n\n"
        f"Latest question: {turn.question[:600]}\nLatest answer: {turn.answer[:600]}\n"
        f"Source aliases: {', '.join(aliases) or '(none)'}"
    )
    return [ChatMessage("system", system), ChatMessage("user", user)]


def post_turn_schema(options: Sequence[CategoryOption], aliases: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "title": {"type": ["string", "null"]},
            "categories": {
                "type": "array",
                "items": {"type": "string", "enum": [o.name for o in options] or [""]},
                "maxItems": MAX_CATEGORIES,
            },
            "attributed": {
                "type": "array",
                "items": {"type": "string", "enum": list(aliases) or [""]},
            },
        },
        "required": ["title", "categories", "attributed"],
        "additionalProperties": False,
    }


def decision_from_model(
    raw: str, *, options: Sequence[CategoryOption], aliases: Sequence[str], model: str
) -> PostTurnDecision:
    data = reply_json_object(raw)
    by_name = {o.name.lower(): o.id for o in options}
    chosen = dict.fromkeys(  # the model may repeat a value; keep each once, in order
        by_name[n.lower()] for n in data.get("categories") or [] if str(n).lower() in by_name
    )
    title = data.get("title")
    allowed = set(aliases)
    attributed = tuple(dict.fromkeys(a for a in data.get("attributed") or [] if a in allowed))
    return PostTurnDecision(
        title=str(title).strip()[:200] if isinstance(title, str) and title.strip() else None,
        categories=tuple((cid, 1.0) for cid in chosen)[:MAX_CATEGORIES],
        attributed_aliases=attributed,
        classifier=model,
    )


def decide_online(
    chat: ChatModel,
    *,
    turn: Turn,
    options: Sequence[CategoryOption],
    aliases: Sequence[str],
) -> PostTurnDecision:
    history = conversation_history(conversation_id=turn.conversation_id, before_index=turn.index)
    messages = post_turn_prompt(turn=turn, history=history, options=options, aliases=aliases)
    raw = async_to_sync(_complete_json_closing)(
        chat,
        messages=messages,
        schema=post_turn_schema(options, aliases),
        schema_name="post_turn",
        temperature=0.0,
        max_tokens=settings.RAG_POST_TURN_MAX_TOKENS,
    )
    decision = decision_from_model(raw, options=options, aliases=aliases, model=chat.name)
    return replace(decision, title=title_in_language(decision.title, question=turn.question))


async def _complete_json_closing(chat: ChatModel, **request: Any) -> str:
    # `async_to_sync` runs this on a loop of its own that ends with the call: the connection
    # the call opened is closed on that loop, not left to be closed on a later, foreign one.
    try:
        # Its own limit, retries included: the chat model's limit is per request.
        async with asyncio.timeout(settings.RAG_POST_TURN_TIMEOUT_S):
            return await chat.complete_json(**request)
    except TimeoutError as exc:
        limit = settings.RAG_POST_TURN_TIMEOUT_S
        raise ChatTimeout(f"no post-turn reply within {limit:g} s") from exc
    finally:
        close = getattr(chat, "aclose", None)
        if close is not None:
            await close()


def decide_offline(
    *,
    turn: Turn,
    options: Sequence[CategoryOption],
    aliases: Sequence[str],
    embedder: Embedder,
    cited: bool,
) -> PostTurnDecision:
    text = f"{turn.question}\n{turn.answer[:600]}"
    return PostTurnDecision(
        title=None if turn.intent == Intent.CONVERSATIONAL else title_from_question(turn.question),
        categories=categories_by_similarity(
            text=text,
            options=options,
            embedder=embedder,
            threshold=settings.RAG_CATEGORY_THRESHOLD,
        ),
        attributed_aliases=() if cited else tuple(aliases[:2]),
        classifier=f"offline/{embedder.model_id}",
    )


def decide(
    *,
    turn: Turn,
    options: Sequence[CategoryOption],
    aliases: Sequence[str],
    cited: bool,
    embedder: Embedder,
    chat: ChatModel | None,
) -> PostTurnDecision:
    # A refusal used no passage: whatever its context held, nothing is its source.
    cited = cited or turn.refused
    if chat is not None:
        try:
            decision = decide_online(chat, turn=turn, options=options, aliases=aliases)
            return decision if not cited else _no_attribution(decision)
        except (ChatError, ValueError, KeyError, TypeError) as exc:
            logger.warning(
                "Post-turn model call failed for turn %s, using offline: %s", turn.pk, exc
            )
    return decide_offline(
        turn=turn, options=options, aliases=aliases, embedder=embedder, cited=cited
    )


def _no_attribution(decision: PostTurnDecision) -> PostTurnDecision:
    return PostTurnDecision(decision.title, decision.categories, (), decision.classifier)
