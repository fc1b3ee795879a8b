"""The online router with the trained one behind it: an endpoint that is down, slow or talks
nonsense costs the turn its LLM classification, not its answer.

Without this, a failed LLM call became the policy's fallback classification (confidence 0),
and every question got a clarifying question while the endpoint was down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from apps.answers.routing.types import Classification, HistoryMessage, QueryClassifier

logger = logging.getLogger(__name__)

# Time the fallback classifier is given on top of the primary's limit (the trained router
# takes milliseconds; this is headroom for a busy CPU).
FALLBACK_ALLOWANCE_S = 2.0


class FallbackClassifier:
    """`primary` within `timeout_s`; on any failure, `fallback`, with the reason recorded."""

    def __init__(
        self, primary: QueryClassifier, fallback: QueryClassifier, *, timeout_s: float
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.primary, self.fallback, self.timeout_s = primary, fallback, timeout_s
        self.name = primary.name

    @property
    def total_timeout_s(self) -> float:
        """The limit a caller should give the whole classification, fallback included."""
        return self.timeout_s + FALLBACK_ALLOWANCE_S

    async def classify(self, *, query: str, history: Sequence[HistoryMessage]) -> Classification:
        try:
            result = await asyncio.wait_for(
                self.primary.classify(query=query, history=history), timeout=self.timeout_s
            )
        except TimeoutError:
            reason = f"{self.primary.name} timed out after {self.timeout_s:g} s"
        except Exception as exc:
            reason = f"{self.primary.name} failed: {type(exc).__name__}: {exc}"[:300]
        else:
            if isinstance(result, Classification):
                return result
            reason = f"{self.primary.name} returned {type(result).__name__}"
        logger.warning(
            "router %s fell back to %s: %s", self.primary.name, self.fallback.name, reason
        )
        decided = await self.fallback.classify(query=query, history=history)
        return replace(decided, fallback_reason=reason)
