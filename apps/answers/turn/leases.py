"""Whether a streaming turn is still being answered, and still wanted: its lease, cancel
requests, who follows it, and the interruption of turns whose process is gone.

Every decision is taken from the turn's row (on the database's clock: `ragplatform.leases`),
never from one process's memory, so it holds whichever process answers, follows or sweeps.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.db.models.functions import Coalesce, Now

from apps.answers.events import TERMINAL_EVENTS, EventType
from apps.answers.models import Turn, TurnStatus
from apps.answers.turn.notices import TURN_CHANNEL, notice_of_cancel
from apps.answers.turn.outcomes import TurnFailed
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import turn_end
from ragplatform.errors import FailureCode
from ragplatform.leases import LAPSED_SQL, NOW_SQL, lease_lapsed, lease_renew

logger = logging.getLogger(__name__)

INTERRUPTED_MESSAGE = (
    "The server answering this question stopped before it finished; please ask again."
)
_SWEEP_BATCH = 100


@dataclass(frozen=True)
class LeaseRenewal:
    held: bool  # still streaming: nobody else ended it meanwhile
    cancel_requested: bool
    abandoned: bool  # no client followed it for RAG_TURN_ABANDON_S


# What a renewal reports: a cancel was requested; no client followed it for RAG_TURN_ABANDON_S.
_WANTED = f"""cancel_requested_at IS NOT NULL,
    coalesce(followed_at < {NOW_SQL} - make_interval(secs => %(abandon_s)s), false)"""


def turn_lease_renew(*, turn_id: int) -> LeaseRenewal:
    """Extend the lease of a turn this process answers, and say whether to go on."""
    row = lease_renew(
        Turn,
        pk=turn_id,
        seconds=settings.RAG_TURN_LEASE_S,
        held="status = %(streaming)s",
        params={"streaming": TurnStatus.STREAMING, "abandon_s": settings.RAG_TURN_ABANDON_S},
        returning=_WANTED,
    )
    if row is None:
        return LeaseRenewal(held=False, cancel_requested=False, abandoned=False)
    return LeaseRenewal(held=True, cancel_requested=bool(row[0]), abandoned=bool(row[1]))


def turn_cancel_request(*, turn_id: int) -> bool:
    """Ask whichever process answers the turn to stop; False if it is no longer streaming.
    The notice is delivered with the commit, so the answering process hears it at once."""
    with transaction.atomic():
        requested = (
            Turn.objects.filter(pk=turn_id, status=TurnStatus.STREAMING).update(
                cancel_requested_at=Coalesce("cancel_requested_at", Now())
            )
            > 0
        )
        if requested:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_notify(%s, %s)", [TURN_CHANNEL, notice_of_cancel(turn_id)]
                )
    return requested


def conversation_turns_cancel(*, conversation_id: UUID) -> list[int]:
    """A new question supersedes the answers still streaming in its conversation."""
    streaming = Turn.objects.filter(conversation_id=conversation_id, status=TurnStatus.STREAMING)
    return [pk for pk in streaming.values_list("pk", flat=True) if turn_cancel_request(turn_id=pk)]


_FOLLOWED = f"""
    UPDATE {Turn._meta.db_table} SET followed_at = {NOW_SQL}
    WHERE id = %s AND status = %s
    RETURNING coalesce({LAPSED_SQL}, false)
"""  # noqa: S608 - the table name is our own model's, the values are parameters


def turn_followed(*, turn_id: int) -> bool:
    """Record that a client follows the turn (so it is not abandoned); True if it is still
    streaming but its lease has lapsed, i.e. nobody is answering it any more."""
    with connection.cursor() as cursor:
        cursor.execute(_FOLLOWED, [turn_id, TurnStatus.STREAMING])
        row = cursor.fetchone()
    return bool(row and row[0])


def turn_follow_check(*, turn_id: int) -> None:
    """What a follower that has heard nothing for a while does: note that it still follows,
    and if the answering process is gone, end the turn itself rather than wait for a sweeper."""
    if turn_followed(turn_id=turn_id):
        turn_interrupt(turn_id=turn_id)


def turn_interrupt(*, turn_id: int, lapsed_only: bool = True) -> bool:
    """Fail a streaming turn whose lease has lapsed as interrupted, keeping the answer streamed
    so far; False if it is not one (ended meanwhile, renewed, or being interrupted elsewhere).
    `lapsed_only=False` is the answering process itself, stopping: its lease does not matter."""
    with transaction.atomic():
        streaming = Turn.objects.select_for_update(skip_locked=True).filter(
            pk=turn_id, status=TurnStatus.STREAMING
        )
        if lapsed_only:
            streaming = streaming.filter(lease_lapsed())
        if not streaming.values_list("pk", flat=True):
            return False
        events = turn_events_since(turn_id=turn_id)
        if events and events[-1]["type"] in TERMINAL_EVENTS:  # stored, status not yet written
            return False
        text = "".join(e["data"].get("text", "") for e in events if e["type"] == EventType.TOKEN)
        outcome = TurnFailed(
            code=FailureCode.INTERRUPTED,
            message=INTERRUPTED_MESSAGE,
            answer=text,
            partial=bool(text),
        )
        turn_end(turn_id=turn_id, seq=(events[-1]["seq"] if events else 0) + 1, outcome=outcome)
    why = "its lease lapsed" if lapsed_only else "its process is stopping"
    logger.info("Turn %s interrupted: %s", turn_id, why)
    return True


def turns_interrupt_lapsed() -> int:
    """The sweeper: interrupt every streaming turn whose lease has lapsed; safe to run in
    several workers at once (each turn is claimed with SKIP LOCKED)."""
    lapsed = Turn.objects.filter(lease_lapsed(), status=TurnStatus.STREAMING)
    ids = list(lapsed.order_by("lease_expires_at").values_list("pk", flat=True)[:_SWEEP_BATCH])
    return sum(turn_interrupt(turn_id=turn_id) for turn_id in ids)
