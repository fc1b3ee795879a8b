"""What PostgreSQL NOTIFY carries between processes about a turn, on one channel.

The statement that stores events also announces them (`services.turn_events_append`), so a
notice is delivered exactly when its event is committed. A notice carries the whole envelope
when it fits PostgreSQL's payload limit, so a follower needs no query for it; a larger one
carries only its turn and seq, and the follower reads the event from the store. A cancel
request is announced on the same channel, so the answering process hears it at once.
"""

from __future__ import annotations

import json
import re
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


@dataclass(frozen=True)
class EncodedEvent:
    """An event's data as JSON, for its row, and its notice, which carries that same text."""

    data: str
    notice: str


def event_encode(envelope: Envelope) -> EncodedEvent:
    """The event's data encoded once, for the stored row and for the notice alike."""
    data = json.dumps(envelope["data"], ensure_ascii=False, separators=(",", ":"))
    kind = json.dumps(envelope["type"], ensure_ascii=False)
    full = f'{{"seq":{int(envelope["seq"])},"turn":{int(envelope["turn"])},"type":{kind},"data":{data}}}'
    if len(full.encode()) > _PAYLOAD_MAX_BYTES:
        full = json.dumps({"turn": envelope["turn"], "seq": envelope["seq"]})
    return EncodedEvent(data=data, notice=full)


def notice_of_cancel(turn_id: int) -> str:
    return json.dumps({"turn": turn_id, "cancel": True})


# The turn a notice is about, read without decoding it: the first "turn" key of every notice
# this code sends comes before any event data (`event_encode`, `notice_of_cancel`).
_TURN = re.compile(r'"turn": ?(\d+)[,}]')


def notice_turn(payload: str) -> int | None:
    """The turn `payload` names, if it looks like a notice of ours (`notice_parse` decides)."""
    found = _TURN.search(payload, 0, 64)
    return int(found.group(1)) if found else None


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
