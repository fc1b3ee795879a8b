"""Writes for conversations: title, the owner's delete and the retention purge."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.answers.models import Conversation, Turn, TurnStatus


class InvalidTitle(ValueError):
    """A conversation's new title is not text, empty or too long (answered 400)."""


class ConversationBusy(Exception):
    """The conversation still has a turn being answered (answered 409)."""


def conversation_title_set(*, conversation_id: UUID, title: str) -> None:
    Conversation.objects.filter(pk=conversation_id).update(title=title[:200])


TITLE_MAX_CHARS = 200


def conversation_title_clean(title: object) -> str:
    """One line in the sidebar: runs of whitespace (line breaks, tabs) become one space."""
    if not isinstance(title, str):
        raise InvalidTitle(_("The title must be text"))
    cleaned = " ".join(title.replace("\x00", "").split())
    if not cleaned:
        raise InvalidTitle(_("The title is empty"))
    if len(cleaned) > TITLE_MAX_CHARS:
        raise InvalidTitle(
            _("The title is at most %(limit)d characters") % {"limit": TITLE_MAX_CHARS}
        )
    return cleaned


def conversation_deleted_mark(*, conversation_id: UUID) -> None:
    """The owner's delete: the conversation leaves their list, search and links at once, while
    its turns, events, citations and feedback stay for the audit until the retention purges
    them. Refused while a turn is still streaming: its answer would keep arriving in a
    conversation its owner can no longer open; stop it first."""
    with transaction.atomic():
        # The same lock `turn_start` takes, so no turn starts between the check and the delete.
        Conversation.objects.select_for_update().filter(pk=conversation_id).first()
        if Turn.objects.filter(
            conversation_id=conversation_id, status=TurnStatus.STREAMING
        ).exists():
            raise ConversationBusy("A question in this conversation is still being answered")
        Conversation.objects.filter(pk=conversation_id, deleted_at__isnull=True).update(
            deleted_at=timezone.now()
        )


def conversations_deleted_purge(*, deleted_before: datetime) -> int:
    """Remove for good the conversations deleted before the cutoff, with their turns and
    everything hanging off them; returns how many went. Safe to run in several workers."""
    deleted, _ = Conversation.objects.filter(deleted_at__lt=deleted_before).delete()
    return int(deleted)
