"""Conversation-aware retrieval on a labelled multi-turn set.

Each conversation's turns run in order through a turn's own rewrite, retrieval, context and
compose stream, with the same history window a stored conversation gives (the router is left
out, as in `answers.py`: these are all questions by construction). Follow-up turns and
standalone turns are scored apart, so a rewrite that helps follow-ups but pollutes new
questions shows; follow-ups whose subject only the previous answer names ("What else did he
direct?" after "Who directed The Moon Is Blue?") are also scored on their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asgiref.sync import async_to_sync

from apps.answers.evaluation.answers import AnsweredQuestion, question_answer
from apps.answers.evaluation.metrics import ndcg_at_k
from apps.answers.providers.registry import Providers
from apps.answers.retrieval.rewrite import query_rewrite
from apps.answers.routing.types import HistoryMessage
from apps.answers.routing.window import conversation_window
from apps.corpus.search.legs import SearchFilters
from apps.corpus.text import Language

TOP_K = 5


@dataclass(frozen=True)
class ConversationTurn:
    text: str
    gold: tuple[str, ...]  # corpus ids
    follow_up: bool
    subject: str = "question"  # "answer": what it points back to is named only in the answer


@dataclass(frozen=True)
class Conversation:
    conversation_id: str
    language: Language
    turns: tuple[ConversationTurn, ...]


def conversations_load(path: Path) -> list[Conversation]:
    """One conversation a JSONL line; ValueError names the first bad line."""
    conversations: list[Conversation] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            turns = tuple(
                ConversationTurn(
                    str(t["text"]),
                    tuple(map(str, t["gold"])),
                    bool(t["follow_up"]),
                    str(t.get("subject", "question")),
                )
                for t in record["turns"]
            )
            conversations.append(
                Conversation(
                    str(record["conversation_id"]), Language(str(record["language"])), turns
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {number}: not a conversation ({exc})") from exc
    return conversations


@dataclass
class TurnScores:
    gold_in_top5: list[bool] = field(default_factory=list)
    ndcg_at_10: list[float] = field(default_factory=list)
    gold_cited: list[bool] = field(default_factory=list)
    rewritten: int = 0

    def add(self, turn: ConversationTurn, answered: AnsweredQuestion, *, rewritten: bool) -> None:
        ranked = answered.ranked_documents
        self.gold_in_top5.append(any(doc in turn.gold for doc in ranked[:TOP_K]))
        self.ndcg_at_10.append(ndcg_at_k(ranked, dict.fromkeys(turn.gold, 1), 10))
        self.gold_cited.append(any(doc in turn.gold for doc in answered.cited_documents))
        self.rewritten += rewritten

    def summary(self) -> dict[str, Any]:
        count = len(self.gold_in_top5)

        def mean(values: Sequence[float]) -> float:
            return round(sum(values) / count, 4) if count else 0.0

        return {
            "turns": count,
            "gold_in_top5": mean(self.gold_in_top5),
            "ndcg@10": mean(self.ndcg_at_10),
            "gold_passage_cited": mean(self.gold_cited),
            "rewritten": self.rewritten,
        }


@dataclass
class ConversationScores:
    follow_up: TurnScores = field(default_factory=TurnScores)
    standalone: TurnScores = field(default_factory=TurnScores)
    answer_subject: TurnScores = field(default_factory=TurnScores)  # also in follow_up

    def add(self, turn: ConversationTurn, answered: AnsweredQuestion, *, rewritten: bool) -> None:
        kind = self.follow_up if turn.follow_up else self.standalone
        kind.add(turn, answered, rewritten=rewritten)
        if turn.follow_up and turn.subject == "answer":
            self.answer_subject.add(turn, answered, rewritten=rewritten)

    def summary(self, **extra: Any) -> dict[str, Any]:
        return {
            "follow_up": self.follow_up.summary(),
            "standalone": self.standalone.summary(),
            "answer_subject": self.answer_subject.summary(),
            **extra,
        }


def conversations_evaluate(
    *,
    conversations: Sequence[Conversation],
    providers: Providers,
    filters: SearchFilters,
    budget: int,
    rewrite: bool = True,
    rules_only: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ConversationScores:
    """`rules_only`: rewrite follow-ups by the offline rules even with a chat model configured
    (to compare the two rewrites under one composer)."""
    scores = ConversationScores()
    for done, conversation in enumerate(conversations, start=1):
        async_to_sync(_conversation_run)(
            conversation,
            scores,
            providers=providers,
            filters=filters,
            budget=budget,
            rewrite=rewrite,
            rules_only=rules_only,
        )
        if progress:
            progress(done)
    return scores


async def _conversation_run(
    conversation: Conversation,
    scores: ConversationScores,
    *,
    providers: Providers,
    filters: SearchFilters,
    budget: int,
    rewrite: bool,
    rules_only: bool,
) -> None:
    history: tuple[HistoryMessage, ...] = ()
    for turn in conversation.turns:
        rewritten = (
            await query_rewrite(
                question=turn.text,
                history=history,
                chat=None if rules_only else providers.chat,
                timeout_s=providers.rewrite_timeout_s,
                max_tokens=providers.rewrite_max_tokens,
            )
            if rewrite
            else None
        )
        answered = await question_answer(
            query=turn.text,
            providers=providers,
            filters=filters,
            budget=budget,
            history=history,
            rewrite=rewritten,
        )
        scores.add(turn, answered, rewritten=rewritten is not None)
        # The window a stored conversation gives the next turn (selectors.conversation_history).
        history = conversation_window(
            [
                *history,
                HistoryMessage("user", turn.text),
                HistoryMessage("assistant", answered.text),
            ]
        )
