"""Classification and first-pass retrieval run concurrently; unused results are dropped."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from apps.answers.providers.registry import Providers
from apps.answers.retrieval.rewrite import query_rewrite
from apps.answers.retrieval.types import RetrievalRequest, RetrievalResult
from apps.answers.routing.policy import classify_safely
from apps.answers.routing.types import Classification, HistoryMessage, Strategy
from apps.corpus.search.legs import SearchFilters


@dataclass
class Speculation:
    classification: Classification
    first_pass: asyncio.Task[RetrievalResult]
    spans_ms: dict[str, tuple[float, float]] = field(default_factory=dict)  # stage -> (start, end)

    async def retrieval(self) -> RetrievalResult:
        return await self.first_pass

    def drop(self) -> None:
        self.first_pass.cancel()


async def speculate(
    *,
    query: str,
    history: Sequence[HistoryMessage],
    filters: SearchFilters,
    providers: Providers,
    started: float,
) -> Speculation:
    spans: dict[str, tuple[float, float]] = {}

    async def timed_retrieval() -> RetrievalResult:
        begin = _ms(started)
        try:
            # A follow-up searches as its standalone rewrite too, so the answer route can
            # reuse this pass whatever the router decides.
            rewrite = await query_rewrite(
                question=query,
                history=history,
                chat=providers.chat,
                timeout_s=providers.rewrite_timeout_s,
                max_tokens=providers.rewrite_max_tokens,
            )
            if history:
                spans["rewrite"] = (begin, _ms(started))
            return await providers.retriever.retrieve(
                RetrievalRequest(
                    query=query, filters=filters, strategy=Strategy.SIMPLE, rewrite=rewrite
                )
            )
        finally:
            spans["first_pass_retrieval"] = (begin, _ms(started))

    first_pass = asyncio.create_task(timed_retrieval())
    await asyncio.sleep(0)  # let retrieval start before the (possibly CPU-bound) classifier
    begin = _ms(started)
    try:
        classification = await classify_safely(
            classifier=providers.classifier,
            query=query,
            history=history,
            timeout_s=providers.router_timeout_s,
        )
    except BaseException:
        first_pass.cancel()
        with contextlib.suppress(BaseException):
            await first_pass
        raise
    spans["classification"] = (begin, _ms(started))
    return Speculation(classification, first_pass, spans)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
