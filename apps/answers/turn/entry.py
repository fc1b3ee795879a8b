"""The one entry every transport uses to open, run and follow a turn: the WebSocket consumer,
the SSE views, the REST API, `manage.py ask` and the other clients' doors (`apps.reach`); each
names itself (`client`), so the audit shows which client asked.

Views, consumers and commands gate (authentication, request shape) and forward; everything that
decides whether a question may be asked, and every write, happens behind this module.

A turn runs to its end unless someone asks to cancel it: the transports start it detached from
their connection (`turn_launch`) and follow it like any other client (`turn_follow`), so a
dropped connection cancels nothing and the answer can be resumed on any process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from django.conf import settings

from apps.answers.conversations.selectors import conversation_get
from apps.answers.events import TERMINAL_EVENTS, Envelope
from apps.answers.models import Conversation, Turn, TurnClient
from apps.answers.providers.registry import providers_default
from apps.answers.turn.follow import AskerReadable, turn_follow
from apps.answers.turn.keeper import lease_keep
from apps.answers.turn.leases import conversation_turns_cancel, turn_cancel_request, turn_interrupt
from apps.answers.turn.recorder import TurnRecorder
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import (
    InvalidQuestion,
    conversation_with_turn_start,
    question_clean,
    turn_start,
)
from apps.corpus.access import user_collection_ids_readable
from apps.corpus.documents.selectors import UnknownCollection, collection_ids_resolve
from apps.corpus.search.legs import SearchFilters
from ragplatform.db_threads import db_call, db_threads_detached
from ragplatform.errors import FailureCode
from ragplatform.rate_limits import rate_take

__all__ = ["AskerReadable", "turn_follow"]  # followed through this entry like everything else

logger = logging.getLogger(__name__)

_UNAVAILABLE = "The answering service is not available right now; please try again later."
_BROKE = "Something went wrong while answering; please try again."
# The turns this process answers for a transport, by their task.
_RUNNING: dict[asyncio.Task[None], int] = {}


class RateLimited(Exception):
    """The user asked more than RAG_ASKS_PER_MINUTE questions in the last minute."""


@dataclass(frozen=True)
class OpenedTurn:
    turn: Turn
    filters: SearchFilters
    asker: AskerReadable  # what the asker may read now, for their own follow
    superseded: tuple[int, ...] = ()  # answers in its conversation it asked to cancel


async def turn_open(
    *,
    user_id: int | None,
    conversation_id: UUID | None,
    question: str,
    client: TurnClient,
    collection_names: Sequence[str] = (),
    client_agent: str = "",
) -> OpenedTurn:
    """Validate, authorise and rate-limit a question, then persist its turn (status streaming)
    with the client that asked (`client_agent`: what it says it is, e.g. its User-Agent).

    `user_id` None is the operator at the command line: no rate limit, any conversation, every
    collection. Anyone else retrieves only from the collections they may read, as the turn
    records. Raises InvalidQuestion (bad text, unknown or unreadable collection), NotFound or
    RateLimited.
    """
    return await db_call(_turn_open)(
        user_id=user_id,
        conversation_id=conversation_id,
        question=question,
        collection_names=collection_names,
        client=client,
        client_agent=client_agent,
    )


def _turn_open(
    *,
    user_id: int | None,
    conversation_id: UUID | None,
    question: str,
    collection_names: Sequence[str],
    client: TurnClient,
    client_agent: str,
) -> OpenedTurn:
    cleaned = question_clean(question)
    readable = user_collection_ids_readable(user_id=user_id)
    collection_ids = _collections(collection_names, readable=readable)
    conversation: Conversation | None = None
    if conversation_id is not None:
        conversation = conversation_get(conversation_id=conversation_id, user_id=user_id)
    if user_id is not None:
        _rate_limit(user_id)
    superseded: tuple[int, ...] = ()
    if conversation is None:
        turn = conversation_with_turn_start(
            user_id=user_id,
            question=cleaned,
            readable_collections=collection_ids,
            client=client,
            client_agent=client_agent,
        )
    else:
        # A new question supersedes the answer still streaming in the same conversation.
        superseded = tuple(conversation_turns_cancel(conversation_id=conversation.pk))
        turn = turn_start(
            conversation=conversation,
            question=cleaned,
            readable_collections=collection_ids,
            client=client,
            client_agent=client_agent,
        )
    return OpenedTurn(
        turn=turn,
        filters=SearchFilters(collection_ids=collection_ids),
        asker=AskerReadable(readable),
        superseded=superseded,
    )


def _rate_limit(user_id: int) -> None:
    # Counted and recorded in one statement in the database, so two processes (or two
    # sockets of one user) can never both take the last question of the minute.
    limit = settings.RAG_ASKS_PER_MINUTE
    if not rate_take(key=f"asks:{user_id}", amount=1, limit=limit, window=timedelta(minutes=1)):
        raise RateLimited(f"At most {limit} questions a minute; please wait a moment.")


def _collections(
    names: Sequence[str], *, readable: frozenset[int] | None
) -> tuple[int, ...] | None:
    """The collection ids to search: the named ones, or with no names every readable one
    (None: every collection). A name outside `readable` is refused as if it did not exist."""
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise InvalidQuestion("collections must be a list of collection names")
    if len(names) > (limit := settings.RAG_MAX_COLLECTIONS_PER_QUESTION):
        raise InvalidQuestion(f"At most {limit} collections")
    if not names:
        return None if readable is None else tuple(sorted(readable))
    try:
        return collection_ids_resolve(names=list(dict.fromkeys(names)), among=readable)
    except UnknownCollection as exc:
        raise InvalidQuestion(str(exc)) from exc


def conversation_id_parse(value: object) -> UUID | None:
    """A client's conversation field: absent or empty starts a new conversation."""
    if value is None or value == "":
        return None
    try:
        return UUID(str(value))
    except ValueError:
        raise InvalidQuestion("conversation must be a conversation id") from None


async def turn_events(
    *, turn_id: int, filters: SearchFilters, waited: bool = True
) -> AsyncIterator[Envelope]:
    """`turn_run` over the configured providers, holding the turn's lease while it runs.

    The turn stops early only when the shared state says so (a cancel request, nobody
    following it for RAG_TURN_ABANDON_S, or someone else ended it) or when the caller closes
    this generator; either way it ends with a stored terminal event, which is yielded last
    when the caller is still listening. A caller reading these events (`ask`, the JSON
    answer endpoint) waits for the answer, so the turn counts as followed while it runs;
    only `turn_launch`, which nobody reads, passes `waited=False`."""
    try:
        providers = await db_call(providers_default)()
    except Exception:
        logger.exception("Could not build the providers for turn %s", turn_id)
        yield await turn_orphan_end(
            turn_id=turn_id, code=FailureCode.MODEL_UNAVAILABLE, message=_UNAVAILABLE
        )
        return
    queue: asyncio.Queue[Envelope | None] = asyncio.Queue()
    work = asyncio.create_task(
        _pump(turn_run(turn_id=turn_id, providers=providers, filters=filters), queue)
    )
    keeper = asyncio.create_task(lease_keep(turn_id=turn_id, stop=work.cancel, followed=waited))
    try:
        ended = False
        while (envelope := await queue.get()) is not None:
            ended = envelope["type"] in TERMINAL_EVENTS
            yield envelope
        if not ended:  # stopped: `turn_run` stored its end but, cancelled, could not yield it
            code = FailureCode.CANCELLED if work.cancelled() else FailureCode.INTERNAL
            yield await turn_orphan_end(turn_id=turn_id, code=code, message=_ending_message(code))
    finally:
        keeper.cancel()
        work.cancel()  # a caller that stops listening stops the turn (`turn_launch` never does)
        await asyncio.wait({work, keeper})


async def _pump(events: AsyncIterator[Envelope], queue: asyncio.Queue[Envelope | None]) -> None:
    try:
        async for envelope in events:
            queue.put_nowait(envelope)
    finally:
        queue.put_nowait(None)


def _ending_message(code: FailureCode) -> str:
    return "The answer was cancelled." if code == FailureCode.CANCELLED else _BROKE


def turn_launch(*, turn_id: int, filters: SearchFilters) -> None:
    """Run the turn in this process to its end, whoever follows it: the transports' clients
    follow it with `turn_follow` and may come and go (and resume on another process)."""
    # A fresh context: the turn outlives the request that asked it, so it must not inherit
    # the request's thread for database calls (Django gives each request its own, and a
    # thread created for a finished request would hold a database connection forever).
    task = asyncio.create_task(_run_to_end(turn_id, filters), context=contextvars.Context())
    _RUNNING[task] = turn_id
    task.add_done_callback(_forget)


def _forget(task: asyncio.Task[None]) -> None:
    _RUNNING.pop(task, None)


@atexit.register
def _interrupt_at_exit() -> None:
    """A process stopped (SIGTERM, SIGINT) ends the answers it still runs as interrupted,
    keeping their text, as its lapsed lease would after a crash, only at once: nobody asked to
    cancel them, so they stay retryable. The event loop has stopped by now: plain calls."""
    for turn_id in sorted(set(_RUNNING.values())):
        try:
            turn_interrupt(turn_id=turn_id, lapsed_only=False)
        except Exception:  # the database may be gone too; the lease covers it then
            logger.warning("Could not end turn %s at exit", turn_id, exc_info=True)
    _RUNNING.clear()


async def turns_launched_wait(*, timeout_s: float) -> int:
    """Wait up to `timeout_s` for the turns this process launched to end, then cancel the
    rest (each then ends as cancelled); returns how many were still running."""
    running = set(_RUNNING)
    if running:
        _done, pending = await asyncio.wait(running, timeout=timeout_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        return len(pending)
    return 0


async def _run_to_end(turn_id: int, filters: SearchFilters) -> None:
    # No request's thread to keep to: the turn's database calls use the database threads.
    with db_threads_detached():
        try:
            async for _envelope in turn_events(turn_id=turn_id, filters=filters, waited=False):
                pass  # stored and announced as it happens; followers hear it from there
        except Exception:
            logger.exception("The answer to turn %s broke off", turn_id)
            await turn_orphan_end(turn_id=turn_id, code=FailureCode.INTERNAL, message=_BROKE)


async def turn_cancel(*, turn_id: int) -> bool:
    """Ask whichever process answers the turn to stop it; its followers get `failed
    cancelled`. False if the turn had already ended."""
    return await db_call(turn_cancel_request)(turn_id=turn_id)


async def turn_orphan_end(
    *,
    turn_id: int,
    code: FailureCode = FailureCode.CANCELLED,
    message: str = "The answer was cancelled.",
) -> Envelope:
    """End an orphaned turn: one `turn_run` never got to (cancelled before it started, or no
    providers) or left without yielding an end, so it never stays streaming; returns its
    terminal event, stored or existing. (Abandoned is another thing: a turn nobody follows.)"""
    recorder = await TurnRecorder.resume(turn_id)
    if recorder.terminal is not None:
        return recorder.terminal
    return await recorder.fail(code, message)
