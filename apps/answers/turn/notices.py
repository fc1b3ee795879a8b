"""What PostgreSQL NOTIFY carries between processes about a turn, on one channel.

The statement that stores an event also announces it (`services.turn_event_append`), so the
notice is delivered exactly when the event is committed. A notice carries the whole envelope
when it fits PostgreSQL's payload limit, so a follower needs no query for it; a larger one
carries only its turn and seq, and the follower reads the event from the store. A cancel
request is announced on the same channel, so the answering process hears it at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from apps.answers.events import Envelope

TURN_CHANNEL = "answers_turn"
# PostgreSQL refuses payloads of 8000 bytes or more; keep clear of the limit.
_PAYLOAD_MAX_BYTES = 7800


@dataclass(frozen=True)
class Notice:
    turn: int
    seq: int = 0  # 0: not an event
    envelope: Envelope | None = None  # None for a cancel, or an event too large to carry
    cancel: bool = False


def notice_of_event(envelope: Envelope) -> str:
    full = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    if len(full.encode()) <= _PAYLOAD_MAX_BYTES:
        return full
    return json.dumps({"turn": envelope["turn"], "seq": envelope["seq"]})


def notice_of_cancel(turn_id: int) -> str:
    return json.dumps({"turn": turn_id, "cancel": True})


def notice_parse(payload: str) -> Notice | None:
    """The notice in `payload`, or None for anything this code did not send."""
    try:
        raw = json.loads(payload)
        turn = int(raw["turn"])
    except (ValueError, TypeError, KeyError):
        return None
    if raw.get("cancel"):
        return Notice(turn=turn, cancel=True)
    seq = raw.get("seq")
    if not isinstance(seq, int):
        return None
    if not isinstance(raw.get("type"), str) or not isinstance(raw.get("data"), dict):
        return Notice(turn=turn, seq=seq)  # too large to carry: the store has it
    envelope = Envelope(seq=seq, turn=turn, type=raw["type"], data=raw["data"])
    return Notice(turn=turn, seq=seq, envelope=envelope)
