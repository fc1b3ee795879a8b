"""The answering process's side of a turn's lease: renew it while the turn runs, and stop the
turn as soon as the shared state says it is no longer wanted (cancel requested, nobody
following it for RAG_TURN_ABANDON_S) or no longer ours (ended by someone else)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from django.conf import settings

from apps.answers.turn.leases import turn_followed, turn_lease_renew
from apps.answers.turn.live import turn_notices
from apps.answers.turn.notices import Notice
from ragplatform.db_threads import db_call

logger = logging.getLogger(__name__)


async def lease_keep(*, turn_id: int, stop: Callable[[], object], followed: bool) -> None:
    """Renew the turn's lease every third of RAG_TURN_LEASE_S until cancelled; call `stop`
    (and return) when the turn must stop. A cancel notice stops it at once; the renewal
    reads the same request from the row, in case the notice was missed. `followed`: the
    caller itself waits for the answer, so each renewal notes the turn followed and it is
    never abandoned while that caller waits."""
    loop = asyncio.get_running_loop()
    async with turn_notices(turn_id, cancels_only=True) as cancels:
        renew_at = loop.time()  # at once: a cancel may have come before we listened
        while True:
            heard = await cancels.next(timeout=renew_at - loop.time())
            if isinstance(heard, Notice):
                stop()
                return
            if loop.time() < renew_at:
                continue
            if not await _renewed(turn_id, followed=followed):
                stop()
                return
            renew_at = loop.time() + settings.RAG_TURN_LEASE_S / 3


async def _renewed(turn_id: int, *, followed: bool) -> bool:
    try:
        if followed:
            await db_call(turn_followed)(turn_id=turn_id)
        renewal = await db_call(turn_lease_renew)(turn_id=turn_id)
    except Exception:
        # A database hiccup: keep answering; if it lasts, the lease lapses and the turn is
        # interrupted, which is the truth by then.
        logger.warning("Could not renew the lease of turn %s", turn_id, exc_info=True)
        return True
    if renewal.cancel_requested or renewal.abandoned:
        logger.info("Turn %s stops: %s", turn_id, renewal)
    return renewal.held and not renewal.cancel_requested and not renewal.abandoned
