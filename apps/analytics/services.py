"""Writes for analytics: applying the post-turn decision, and keeping the daily counts."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from django.db import connection, transaction

from apps.analytics.counts.day_rows import day_rows
from apps.analytics.counts.refused_questions import refused_questions_store
from apps.analytics.models import (
    ANY,
    Category,
    ConversationCategory,
    DailyCategoryCount,
    DailyDocumentCount,
    DailyLatencyCount,
    DailyTurnCount,
    TurnCategory,
)
from apps.analytics.post_turn import CategoryOption, PostTurnDecision, decide, is_small_talk
from apps.answers.conversations.services import conversation_title_set
from apps.answers.models import Citation, CitationKind, Turn, TurnStatus
from apps.answers.providers.chat import ChatModel
from apps.answers.turn.cuts import local_day
from apps.answers.turn.services import CitationRecord, citations_store
from apps.corpus.search.embedders import Embedder
from apps.corpus.search.legs import chunks_hydrate

logger = logging.getLogger(__name__)


def post_turn_run(
    *, turn_id: int, embedder: Embedder, chat: ChatModel | None
) -> PostTurnDecision | None:
    """Title, categories and attribution for a finished turn; None if there is nothing to do."""
    turn = Turn.objects.select_related("conversation").get(pk=turn_id)
    if turn.status != TurnStatus.FINISHED or is_small_talk(turn):
        return None
    options = [
        CategoryOption(c.pk, c.name, c.description) for c in Category.objects.filter(active=True)
    ]
    aliases = list((turn.context or {}).get("aliases", {}))
    # Sources found while answering (cited, or attributed by overlap) need no second guess.
    cited = turn.citations.exists()
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
        _turn_categories_store(turn, decision)
        _attribution_store(turn, decision.attributed_aliases)


def _turn_categories_store(turn: Turn, decision: PostTurnDecision) -> None:
    # What applied at this turn, kept as it was: the history the conversation's set forgets.
    # Running the step again for the same turn replaces its own rows, never another turn's.
    TurnCategory.objects.filter(turn=turn).delete()
    TurnCategory.objects.bulk_create(
        TurnCategory(
            turn=turn,
            category_id=category_id,
            score=min(1.0, max(0.0, score)),
            assigned_by=decision.classifier[:120],
        )
        for category_id, score in decision.categories[:5]
    )


def _attribution_store(turn: Turn, aliases: tuple[str, ...]) -> None:
    if not aliases:
        return  # nothing to add; sources stored while answering stay
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


# --- Daily counts ----------------------------------------------------------------------------

# Any fixed int4 naming this lock; the day is the second key.
_COUNTS_LOCK = 0x0DA1C0
_DAY_TABLES = (
    DailyTurnCount,
    DailyLatencyCount,
    DailyCategoryCount,
    DailyDocumentCount,
)


@dataclass(frozen=True)
class DayCounted:
    day: dt.date
    turns: int
    composers: int  # composers that answered that day


def daily_counts_refresh(*, day: dt.date) -> DayCounted:
    """Recompute one local day's counts from the turn log; running it again changes nothing."""
    with transaction.atomic():
        _day_lock(day)
        rows = day_rows(day)
        # Readers see the old rows or the new ones, never a mix (one transaction).
        for model in _DAY_TABLES:
            model.objects.filter(day=day).delete()
        DailyTurnCount.objects.bulk_create(rows.turns, batch_size=1000)
        DailyLatencyCount.objects.bulk_create(rows.latency, batch_size=1000)
        DailyCategoryCount.objects.bulk_create(rows.categories, batch_size=1000)
        DailyDocumentCount.objects.bulk_create(rows.documents, batch_size=1000)
        # Last: it takes the lock every day's refresh shares, held until the commit.
        refused_questions_store(day=day, counts=rows.refused_questions)
    uncut = [r for r in rows.turns if r.collection == ANY and r.group == ANY]
    return DayCounted(
        day=day, turns=sum(r.turns for r in uncut), composers=len({r.composer for r in uncut})
    )


def daily_counts_refresh_range(*, first: dt.date, last: dt.date) -> list[DayCounted]:
    """Oldest first; one transaction per day so a long rebuild never holds every day's lock."""
    return [
        daily_counts_refresh(day=first + dt.timedelta(days=n))
        for n in range((last - first).days + 1)
    ]


def daily_counts_refresh_for_turn(*, turn_id: int) -> DayCounted | None:
    """Refresh the day a turn belongs to (its start, as the dashboard counts it); None if gone."""
    created = Turn.objects.filter(pk=turn_id).values_list("created_at", flat=True).first()
    return None if created is None else daily_counts_refresh(day=local_day(created))


def _day_lock(day: dt.date) -> None:
    # Two workers refreshing the same day could interleave so that the one that read the log
    # first writes last, leaving a stale count; serialise them until commit.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_COUNTS_LOCK, day.toordinal()])
