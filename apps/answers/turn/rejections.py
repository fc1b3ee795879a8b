"""Why a question or a resume was rejected, as one code for both transports.

The WebSocket sends it in a failed envelope and SSE in a JSON error body; both take the
code from here, so a client sees the same code for the same rejection whichever it uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from apps.answers.conversations.selectors import NotFound
from apps.answers.turn.entry import RateLimited
from apps.answers.turn.services import InvalidQuestion
from ragplatform.errors import FailureCode

FAILURE_FOR_REJECTION: Mapping[type[Exception], FailureCode] = MappingProxyType(
    {
        InvalidQuestion: FailureCode.INVALID_REQUEST,
        NotFound: FailureCode.NOT_FOUND,
        RateLimited: FailureCode.RATE_LIMITED,
    }
)
# What `turn_open` and `turn_get` raise for a request they reject.
REJECTIONS: tuple[type[Exception], ...] = tuple(FAILURE_FOR_REJECTION)


def rejection_code(exc: Exception) -> FailureCode:
    """The code of a rejection; by the first matching class, so subclasses map like their base."""
    for rejection, code in FAILURE_FOR_REJECTION.items():
        if isinstance(exc, rejection):
            return code
    raise TypeError(f"{type(exc).__name__} is not a rejection")
