"""The one entry every transport uses to open, run and follow a turn: the WebSocket consumer,
the SSE views and `manage.py ask`.

Views, consumers and commands gate (authentication, request shape) and forward; everything that
decides whether a question may be asked, and every write, happens behind this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.answers.events import TERMINAL_EVENTS, Envelope, FailureCode
from apps.answers.models import Turn
from apps.answers.providers.registry import providers_default
from apps.answers.replay import turn_events_visible
from apps.answers.selectors import (
    conversation_get,
    turn_events_since,
    turn_is_streaming,
    turns_asked_since,
    user_collection_ids_readable,
)
from apps.answers.services import (
    InvalidQuestion,
    conversation_start,
    question_clean,
    turn_readable_record,
    turn_start,
)
from apps.answers.turn.recorder import TurnRecorder
from apps.answers.turn.run import turn_run
from apps.corpus.search import SearchFilters
from apps.corpus.selectors import UnknownCollection, collection_ids_resolve

logger = logging.getLogger(__name__)

_UNAVAILABLE = "The answering service is not available right now; please try again later."


class RateLimited(Exception):
    """The user asked more than RAG_ASKS_PER_MINUTE questions in the last minute."""


@dataclass(frozen=True)
class OpenedTurn:
    turn: Turn
    filters: SearchFilters


async def turn_open(
    *,
    user_id: int | None,
    conversation_id: UUID | None,
    question: str,
    collection_names: Sequence[str] = (),
) -> OpenedTurn:
    """Validate, authorise and rate-limit a question, then persist its turn (status streaming).

    `user_id` None is the operator at the command line: no rate limit, any conversation, every
    collection. Anyone else retrieves only from the collections they may read, as the turn
    records. Raises InvalidQuestion (bad text, unknown or unreadable collection), NotFound or
    RateLimited.
    """
    return await sync_to_async(_turn_open)(
        user_id=user_id,
        conversation_id=conversation_id,
        question=question,
        collection_names=collection_names,
    )


def _turn_open(
    *,
    user_id: int | None,
    conversation_id: UUID | None,
    question: str,
    collection_names: Sequence[str],
) -> OpenedTurn:
    cleaned = question_clean(question)
    readable = user_collection_ids_readable(user_id=user_id)
    collection_ids = _collections(collection_names, readable=readable)
    if user_id is not None:
        _rate_limit(user_id)
    if conversation_id is None:
        conversation = conversation_start(user_id=user_id)
    else:
        conversation = conversation_get(conversation_id=conversation_id, user_id=user_id)
    with transaction.atomic():  # a turn never exists without the record of what it may read
        turn = turn_start(conversation=conversation, question=cleaned)
        turn_readable_record(turn_id=turn.pk, collection_ids=collection_ids)
    return OpenedTurn(turn=turn, filters=SearchFilters(collection_ids=collection_ids))


def _rate_limit(user_id: int) -> None:
    # Counted from the stored turns, so the limit holds across processes and transports.
    limit = settings.RAG_ASKS_PER_MINUTE
    since = timezone.now() - timedelta(minutes=1)
    if turns_asked_since(user_id=user_id, since=since) >= limit:
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


async def turn_events(*, turn_id: int, filters: SearchFilters) -> AsyncIterator[Envelope]:
    """`turn_run` over the configured providers, ending the turn as cancelled however the
    caller stops early: a task cancel lands inside `turn_run`, which stores the event itself,
    but a caller that just drops or closes this generator would otherwise leave it streaming."""
    try:
        providers = await sync_to_async(providers_default)()
    except Exception:
        logger.exception("Could not build the providers for turn %s", turn_id)
        yield await turn_abandon(
            turn_id=turn_id, code=FailureCode.MODEL_UNAVAILABLE, message=_UNAVAILABLE
        )
        return
    stream = turn_run(turn_id=turn_id, providers=providers, filters=filters)
    ended = False
    try:
        async for envelope in stream:
            ended = envelope["type"] in TERMINAL_EVENTS
            yield envelope
    finally:
        if not ended and isinstance(stream, AsyncGenerator):
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await stream.athrow(asyncio.CancelledError())


async def turn_abandon(
    *,
    turn_id: int,
    code: FailureCode = FailureCode.CANCELLED,
    message: str = "The answer was cancelled.",
) -> Envelope:
    """End a turn that `turn_run` never got to (cancelled before it started, or no providers),
    so it never stays streaming; returns its terminal event, stored or existing."""
    recorder = await TurnRecorder.resume(turn_id)
    if recorder.terminal is not None:
        return recorder.terminal
    return await recorder.fail(code, message)


async def turn_follow(
    *,
    turn_id: int,
    user_id: int | None,
    last_seq: int = 0,
    timeout_s: float = 120.0,
    poll_s: float = 0.25,
) -> AsyncIterator[Envelope]:
    """The stored events after `last_seq`, without what `user_id` may no longer read; while
    the turn is still being answered (by any process), keep polling the store until its
    terminal event or `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    readable = await sync_to_async(user_collection_ids_readable)(user_id=user_id)
    while True:
        events, stored_seq = await sync_to_async(_events_visible)(
            turn_id=turn_id, last_seq=last_seq, readable=readable
        )
        last_seq = max(last_seq, stored_seq)
        for envelope in events:
            yield envelope
            if envelope["type"] in TERMINAL_EVENTS:
                return
        if time.monotonic() >= deadline:
            return
        if not events and not await sync_to_async(turn_is_streaming)(turn_id=turn_id):
            # The turn may have ended between reading its events and its status (both are
            # written in one transaction): read once more, but never wait long.
            deadline = min(deadline, time.monotonic() + 4 * poll_s)
        await asyncio.sleep(poll_s)


def _events_visible(
    *, turn_id: int, last_seq: int, readable: frozenset[int] | None
) -> tuple[list[Envelope], int]:
    """The visible events after `last_seq`, and the last stored seq (withheld ones count)."""
    events = turn_events_since(turn_id=turn_id, last_seq=last_seq)
    stored_seq = events[-1]["seq"] if events else last_seq
    return turn_events_visible(turn_id=turn_id, events=events, readable=readable), stored_seq
