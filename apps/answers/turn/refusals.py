"""Why a question or a resume was refused, as one code for both transports.

The WebSocket sends it in a failed envelope and SSE in a JSON error body; both take the
code from here, so a client sees the same code for the same refusal whichever it uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from apps.answers.conversations.selectors import NotFound
from apps.answers.turn.entry import RateLimited
from apps.answers.turn.services import InvalidQuestion
from ragplatform.errors import FailureCode

FAILURE_FOR_REFUSAL: Mapping[type[Exception], FailureCode] = MappingProxyType(
    {
        InvalidQuestion: FailureCode.INVALID_REQUEST,
        NotFound: FailureCode.NOT_FOUND,
        RateLimited: FailureCode.RATE_LIMITED,
    }
)
# What `turn_open` and `turn_get` raise for a request they refuse.
REFUSALS: tuple[type[Exception], ...] = tuple(FAILURE_FOR_REFUSAL)


def refusal_code(exc: Exception) -> FailureCode:
    """The code of a refusal; by the first matching class, so subclasses map like their base."""
    for refusal, code in FAILURE_FOR_REFUSAL.items():
        if isinstance(exc, refusal):
            return code
    raise TypeError(f"{type(exc).__name__} is not a refusal")
