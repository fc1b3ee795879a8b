"""Reads for conversations: one by id for its owner, the history a turn reads, and what the
chat page's sidebar and empty state show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal, TypeVar
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db.models import Case, Exists, Model, OuterRef, Q, QuerySet, Subquery, Value, When
from django.utils import timezone

from apps.answers.models import Conversation, Turn
from apps.answers.routing.types import HistoryMessage
from apps.answers.routing.window import conversation_window
from apps.corpus.access import collections_readable, user_collection_ids_readable
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus
from apps.corpus.text import detect_language
from apps.corpus.text.readable import readable_title


def conversation_history(*, conversation_id: UUID, before_index: int) -> tuple[HistoryMessage, ...]:
    """The window the router and composers see: last 6 messages, each cut to 600 characters."""
    turns = (
        Turn.objects.filter(conversation_id=conversation_id, index__lt=before_index)
        .order_by("-index")
        .only("question", "answer")[:3]
    )
    messages: list[HistoryMessage] = []
    for turn in reversed(list(turns)):
        messages.append(HistoryMessage(role="user", text=turn.question))
        if turn.answer:
            messages.append(HistoryMessage(role="assistant", text=turn.answer))
    return conversation_window(messages)


def conversations_for_user(*, user_id: int) -> QuerySet[Conversation]:
    """The conversations a user sees: their own, less those they deleted (which only the
    audit still shows)."""
    return Conversation.objects.filter(user_id=user_id, deleted_at__isnull=True).order_by(
        "-updated_at"
    )


_M = TypeVar("_M", bound=Model)


class NotFound(LookupError):
    """The conversation or turn does not exist or belongs to someone else (answered 404)."""


def conversation_get(*, conversation_id: UUID, user_id: int | None) -> Conversation:
    """A conversation by id; with `user_id`, only if that user's. None is the operator (the
    command line), who may continue any conversation."""
    conversations = Conversation.objects.filter(pk=conversation_id)
    if user_id is not None:
        conversations = conversations.filter(deleted_at__isnull=True)
    return owned_one(conversations, owner="user_id", user_id=user_id, what="conversation")


def owned_one(rows: QuerySet[_M], *, owner: str, user_id: int | None, what: str) -> _M:
    if user_id is not None:
        rows = rows.filter(**{owner: user_id})
    found = rows.first()
    if found is None:
        raise NotFound(f"No such {what}")
    return found


# --- The chat page's sidebar and empty state ----------------------------------------------

EXAMPLES = 4
Period = Literal["today", "week", "older"]


@dataclass(frozen=True)
class ConversationGroup:
    period: Period
    conversations: list[Conversation]


def conversations_sidebar(*, user_id: int, query: str = "") -> list[Conversation]:
    """The user's conversations, newest activity first, each with its first question (the
    label until it has a title); with `query`, only those whose title, questions or answers
    contain it."""
    first = Turn.objects.filter(conversation=OuterRef("pk")).order_by("index")
    conversations = conversations_for_user(user_id=user_id).annotate(
        first_question=Subquery(first.values("question")[:1])
    )
    if query:
        text = Q(question__icontains=query) | Q(answer__icontains=query)
        matching = Turn.objects.filter(text, conversation=OuterRef("pk"))
        conversations = conversations.filter(Q(title__icontains=query) | Exists(matching))
    return list(conversations[: settings.RAG_SIDEBAR_CONVERSATIONS])


def conversations_grouped(
    *, conversations: Sequence[Conversation], today: date | None = None
) -> list[ConversationGroup]:
    """Today, the last 7 days and older, by last activity in the site's time zone; empty
    groups are left out."""
    today = today or timezone.localdate()
    groups: dict[Period, list[Conversation]] = {"today": [], "week": [], "older": []}
    for conversation in conversations:
        day = timezone.localdate(conversation.updated_at)
        period: Period = (
            "today" if day >= today else "week" if day > today - timedelta(days=7) else "older"
        )
        groups[period].append(conversation)
    return [ConversationGroup(p, items) for p, items in groups.items() if items]


def collections_pickable(*, user_id: int) -> list[Collection]:
    """The collections a user may choose to restrict a conversation to, by name."""
    user = get_user_model().objects.filter(pk=user_id).first()
    return list(collections_readable(user=user or AnonymousUser()).order_by("name"))


def conversation_collections_chosen(
    *, conversation_id: UUID, pickable: Sequence[Collection]
) -> list[str]:
    """The collections the conversation's last question was restricted to, as names among
    `pickable`; empty when it could read all of them (no restriction to show)."""
    last = (
        Turn.objects.filter(conversation_id=conversation_id)
        .order_by("-index")
        .values_list("readable_collections", flat=True)
        .first()
    )
    if not last:  # no turn yet, or every collection (None)
        return []
    chosen = [c.name for c in pickable if c.pk in set(last)]
    return [] if len(chosen) == len(pickable) else chosen


def example_topics(*, user_id: int, language: str, limit: int = EXAMPLES) -> list[str]:
    """Topics to suggest asking about, one per readable document, documents in `language`
    first: a section heading below the title, else the title. A topic in another script is
    wrapped in first-strong isolates, so an English heading inside a Persian sentence (or the
    reverse) keeps its own direction without reordering the sentence's quotes around it."""
    documents = Document.objects.filter(status=DocumentStatus.READY, chunk_count__gt=0)
    readable = user_collection_ids_readable(user_id=user_id)
    if readable is not None:
        documents = documents.filter(collection_id__in=readable)
    section = Chunk.objects.filter(document=OuterRef("pk"), heading__contains=" > ")
    rows = (
        documents.annotate(
            section=Subquery(section.order_by("index").values("heading")[:1]),
            other_language=Case(When(language=language[:2], then=Value(0)), default=Value(1)),
        )
        .order_by("other_language", "title", "pk")
        .values_list("section", "title", "filename")[:limit]
    )
    topics = [
        _topic(s or readable_title(title, filename=filename.rsplit(".", 1)[0]))
        for s, title, filename in rows
    ]
    return [_isolated(topic, language=language[:2]) for topic in topics]


def _isolated(topic: str, *, language: str) -> str:
    # U+2068 FIRST STRONG ISOLATE ... U+2069 POP DIRECTIONAL ISOLATE; the topic's own script
    # decides, as a Persian document may well have English headings.
    return topic if detect_language(topic) == language else f"\u2068{topic}\u2069"


def _topic(heading: str) -> str:
    """The last part of a heading path ("Guide > Setup" -> "Setup")."""
    return heading.rsplit(" > ", 1)[-1].strip()
