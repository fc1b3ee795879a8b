"""Rerank stage: `none`, or a Cohere/Jina-style /v1/rerank endpoint with a fallback to `none`.

No local re-scorer ships: no PyPI package carries cross-encoder weights offline, and a
sentence-level max-similarity pass with the bundled embedder would embed every candidate's
sentences per query (seconds, not milliseconds) — see docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import httpx

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerankScore:
    index: int  # position in the input list
    score: float


class Reranker(Protocol):
    name: str

    async def rerank(self, *, query: str, passages: Sequence[str]) -> list[RerankScore] | None:
        """Scores best first, or None when this reranker could not run (keep the fused order)."""
        ...


class NoReranker:
    name = "none"

    async def rerank(self, *, query: str, passages: Sequence[str]) -> list[RerankScore] | None:
        return None


class RemoteReranker:
    """POST {base_url}/rerank {"model", "query", "documents"} -> {"results": [{"index", "relevance_score"}]}."""

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout_s: float = 5.0):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"rerank base URL must be http(s): {base_url!r}")
        self.name = f"remote/{model}"
        self._url = base_url.rstrip("/") + "/rerank"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout_s

    async def rerank(self, *, query: str, passages: Sequence[str]) -> list[RerankScore] | None:
        body = {"model": self._model, "query": query, "documents": list(passages)}
        try:
            # httpx limits each read and write; the whole request gets the same limit too.
            async with (
                asyncio.timeout(self._timeout),
                httpx.AsyncClient(timeout=self._timeout) as client,
            ):
                response = await client.post(self._url, json=body, headers=self._headers)
                response.raise_for_status()
                results = response.json()["results"]
                scores = [
                    RerankScore(int(r["index"]), float(r["relevance_score"])) for r in results
                ]
        except (httpx.HTTPError, TimeoutError, KeyError, TypeError, ValueError) as exc:
            logger.warning("Reranker %s failed, keeping the fused order: %s", self.name, exc)
            return None
        valid = [s for s in scores if 0 <= s.index < len(passages)]
        return sorted(valid, key=lambda s: -s.score)
