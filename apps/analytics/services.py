"""Writes for analytics: applying the post-turn decision to the conversation."""

from __future__ import annotations

import logging

from django.db import transaction

from apps.analytics.models import Category, ConversationCategory
from apps.analytics.post_turn import CategoryOption, PostTurnDecision, decide
from apps.answers.models import Citation, CitationKind, Turn, TurnStatus
from apps.answers.providers.chat import ChatModel
from apps.answers.services import CitationRecord, citations_store, conversation_title_set
from apps.corpus.embedders import Embedder
from apps.corpus.search import chunks_hydrate

logger = logging.getLogger(__name__)


def post_turn_run(
    *, turn_id: int, embedder: Embedder, chat: ChatModel | None
) -> PostTurnDecision | None:
    """Title, categories and attribution for a finished turn; None if there is nothing to do."""
    turn = Turn.objects.select_related("conversation").get(pk=turn_id)
    if turn.status != TurnStatus.FINISHED:
        return None
    options = [
        CategoryOption(c.pk, c.name, c.description) for c in Category.objects.filter(active=True)
    ]
    aliases = list((turn.context or {}).get("aliases", {}))
    cited = turn.citations.filter(kind=CitationKind.CITED).exists()
    decision = decide(
        turn=turn, options=options, aliases=aliases, cited=cited, embedder=embedder, chat=chat
    )
    post_turn_apply(turn=turn, decision=decision)
    return decision


def post_turn_apply(*, turn: Turn, decision: PostTurnDecision) -> None:
    with transaction.atomic():
        if decision.title and not turn.conversation.title:
            conversation_title_set(conversation_id=turn.conversation_id, title=decision.title)
        # The set is replaced every turn: it describes the whole conversation as it is now.
        ConversationCategory.objects.filter(conversation_id=turn.conversation_id).delete()
        ConversationCategory.objects.bulk_create(
            ConversationCategory(
                conversation_id=turn.conversation_id,
                category_id=category_id,
                score=min(1.0, max(0.0, score)),
                assigned_by=decision.classifier[:120],
            )
            for category_id, score in decision.categories[:5]
        )
        _attribution_store(turn, decision.attributed_aliases)


def _attribution_store(turn: Turn, aliases: tuple[str, ...]) -> None:
    mapping: dict[str, int] = (turn.context or {}).get("aliases", {})
    chunk_ids = [mapping[a] for a in aliases if a in mapping]
    rows = chunks_hydrate(chunk_ids)
    Citation.objects.filter(turn=turn, kind=CitationKind.ATTRIBUTED).delete()
    citations_store(
        turn_id=turn.pk,
        citations=[
            CitationRecord(
                alias=alias,
                chunk_id=rows[mapping[alias]].chunk_id,
                document_id=rows[mapping[alias]].document_id,
                title=rows[mapping[alias]].title or rows[mapping[alias]].filename,
                source_file=rows[mapping[alias]].filename,
                page=rows[mapping[alias]].page,
                snippet=rows[mapping[alias]].text[:400],
                position=None,
                kind=CitationKind.ATTRIBUTED,
            )
            for alias in aliases
            if alias in mapping and mapping[alias] in rows
        ],
    )
