"""Query variants beyond the original: HyDE passages and multi-hop bridging queries."""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Sequence

from apps.answers.providers.chat import ChatError, ChatMessage, ChatModel
from apps.answers.retrieval.types import RetrievedChunk
from apps.corpus.text import words

logger = logging.getLogger(__name__)

HYDE_PROMPT = (
    "Write one short factual passage (3-4 sentences) that would answer the question below, "
    "as it might appear in a reference document. Do not mention the question. "
    "Write in the question's language."
)
BRIDGE_PROMPT = (
    "A question is being answered from documents in steps. Given the question and the passages "
    "found so far, write ONE short search query for the information still missing. "
    "Reply with the query only."
)


async def chat_text(
    chat: ChatModel, *, system: str, user: str, timeout_s: float, max_tokens: int
) -> str | None:
    """A short completion, or None when the model fails or times out (callers fall back)."""

    async def collect() -> str:
        pieces = [
            piece
            async for piece in chat.stream(
                messages=[ChatMessage("system", system), ChatMessage("user", user)],
                temperature=0.0,
                max_tokens=max_tokens,
            )
        ]
        return "".join(pieces).strip()

    try:
        return await asyncio.wait_for(collect(), timeout=timeout_s) or None
    except (ChatError, TimeoutError) as exc:
        logger.warning("Query expansion with %s failed: %s", chat.name, exc)
        return None


async def hyde_passage(
    chat: ChatModel, *, query: str, timeout_s: float, max_tokens: int = 160
) -> str | None:
    return await chat_text(
        chat, system=HYDE_PROMPT, user=query, timeout_s=timeout_s, max_tokens=max_tokens
    )


async def bridging_query(
    *,
    query: str,
    found: Sequence[RetrievedChunk],
    chat: ChatModel | None,
    timeout_s: float,
    max_tokens: int = 48,
) -> tuple[str, str]:
    """The next hop's query and how it was made ("chat" or "feedback")."""
    if chat is not None:
        passages = "\n\n".join(f"- {c.text[:600]}" for c in found[:3])
        text = await chat_text(
            chat,
            system=BRIDGE_PROMPT,
            user=f"Question: {query}\n\nPassages:\n{passages}",
            timeout_s=timeout_s,
            max_tokens=max_tokens,
        )
        if text:
            return text.splitlines()[0][:300], "chat"
    return feedback_query(query=query, found=found), "feedback"


STOP_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "at",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "into",
        "than",
        "then",
        "there",
        "their",
        "which",
        "who",
        "whom",
        "what",
        "when",
        "where",
        "why",
        "how",
        "not",
        "no",
        "can",
        "could",
        "may",
        "might",
        "will",
        "would",
        "shall",
        "should",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "also",
        "such",
        "other",
        "more",
        "most",
        "we",
        "our",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "you",
        "your",
        "i",
        "my",
    ]
)


def feedback_query(*, query: str, found: Sequence[RetrievedChunk], terms: int = 6) -> str:
    """Offline bridge: the question plus the salient terms of the best passages that it lacks
    (pseudo-relevance feedback), so the next hop reaches text that shares that vocabulary."""
    asked = {w.lower() for w in words(query)}
    counts: Counter[str] = Counter()
    for rank, chunk in enumerate(found[:3]):
        for word in words(chunk.text):
            token = word.lower()
            if (
                len(token) > 3
                and token not in asked
                and token not in STOP_WORDS
                and not token.isdigit()
            ):
                counts[token] += 3 - rank
    extra = [t for t, _ in counts.most_common(terms)]
    return re.sub(r"\s+", " ", f"{query} {' '.join(extra)}").strip()
