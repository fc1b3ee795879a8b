"""Context builder: a token budget, lowest-ranked chunks out first, whole sentences only."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from apps.answers.retrieval.types import ContextChunk, ContextWindow, RetrievedChunk
from apps.corpus.text import estimate_tokens, split_sentences

TokenCounter = Callable[[str], int]


def context_build(
    *,
    chunks: Sequence[RetrievedChunk],
    budget_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_chunks: int = 12,
) -> ContextWindow:
    """Keep chunks in rank order while they fit; a chunk that does not fit is left out whole,
    except the best one, which is cut back to the whole sentences that fit."""
    if budget_tokens <= 0:
        raise ValueError("budget_tokens must be positive")
    kept: list[ContextChunk] = []
    dropped: list[int] = []
    used = 0
    for chunk in chunks:
        if len(kept) >= max_chunks:
            dropped.append(chunk.chunk_id)
            continue
        text = chunk.text
        cost = count_tokens(text)
        if used + cost > budget_tokens and not kept:
            text = _sentences_within(text, budget_tokens, count_tokens)
            cost = count_tokens(text) if text else 0
        if not text or used + cost > budget_tokens:
            dropped.append(chunk.chunk_id)
            continue
        kept.append(ContextChunk(alias=f"c{len(kept) + 1}", chunk=chunk, text=text))
        used += cost
    return ContextWindow(tuple(kept), budget_tokens, used, tuple(dropped))


def _sentences_within(text: str, budget: int, count_tokens: TokenCounter) -> str:
    taken: list[str] = []
    for sentence in split_sentences(text):
        if count_tokens(" ".join([*taken, sentence])) > budget:
            break
        taken.append(sentence)
    return " ".join(taken)
