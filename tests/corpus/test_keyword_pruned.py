"""The pruned keyword leg against exact BM25 on a small corpus (real PostgreSQL).

Every chunk holds the same common Persian words (as "و" and "در" are in most Persian chunks);
the budget is set below their postings so they are looked up for the candidates only.
"""

from __future__ import annotations

import random

import pytest
from django.test import override_settings

from apps.answers.providers.configured import keyword_pruning_configured
from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Collection
from apps.corpus.search.keyword_pruned import KeywordPruning, terms_plan
from apps.corpus.search.legs import KeywordQuery, SearchFilters, chunks_keyword_search
from tests.conftest import CountingEmbedder

COMMON = ("و", "در", "این", "است")
TOPICS = tuple(f"واژه{chr(0x0628 + i)}{chr(0x0628 + j)}" for i in range(6) for j in range(5))
QUERIES = (
    f"این {TOPICS[0]} در {TOPICS[1]} است",
    f"{TOPICS[3]} و {TOPICS[4]} و {TOPICS[5]}",
    f"در {TOPICS[7]} این است و {TOPICS[8]}",
    f"{TOPICS[2]} {TOPICS[9]} {TOPICS[11]} {TOPICS[12]} در",
)


def _corpus(collection: Collection, count: int = 40) -> SearchFilters:
    rng = random.Random(7)
    for i in range(count):
        words = [*COMMON, *rng.sample(TOPICS, 6), *rng.choices(COMMON, k=rng.randint(0, 4))]
        rng.shuffle(words)
        text = f"# بخش {i}\n\n{' '.join(words)}."
        submitted = document_submit(collection=collection, filename=f"p{i}.md", data=text.encode())
        document_process(document_id=submitted.document.pk)
    return SearchFilters(collection_ids=(collection.pk,))


def _search(query: str, filters: SearchFilters, pruning: KeywordPruning | None, limit: int) -> list:
    return chunks_keyword_search(
        query=KeywordQuery.from_text(query), filters=filters, limit=limit, pruning=pruning
    )


@pytest.mark.django_db
def test_pruned_search_gives_the_exact_top_results_and_scores(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    filters = _corpus(collection)
    # The topic words (about 8 postings each) fit the budget, the common words (40 each) do
    # not; every candidate is rescored.
    pruning = KeywordPruning(postings_budget=39, rescore_depth=40)
    for query in QUERIES:
        exact = _search(query, filters, None, 10)
        pruned = _search(query, filters, pruning, 10)
        assert [c.chunk_id for c in pruned] == [c.chunk_id for c in exact], query
        assert [c.score for c in pruned] == pytest.approx([c.score for c in exact]), query


@pytest.mark.django_db
def test_a_shallow_rescore_still_scores_exactly_what_it_returns(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    filters = _corpus(collection)
    pruning = KeywordPruning(postings_budget=30, rescore_depth=5)
    for query in QUERIES:
        exact = {c.chunk_id: c.score for c in _search(query, filters, None, 40)}
        pruned = _search(query, filters, pruning, 5)
        assert len(pruned) == 5
        assert [c.score for c in pruned] == pytest.approx([exact[c.chunk_id] for c in pruned])


@pytest.mark.django_db
def test_chunks_with_only_common_words_follow_the_candidates_exactly_scored(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    filters = _corpus(collection)
    rare = document_submit(
        collection=collection, filename="rare.md", data="# نو\n\nکهکشان".encode()
    )
    document_process(document_id=rare.document.pk)
    exact = {c.chunk_id: c.score for c in _search("و در کهکشان", filters, None, 100)}
    assert len(exact) == 41  # every chunk holds "و"
    # "و" and "در" are over the budget: only the rare word's chunk is a candidate, and the
    # list is filled from a sample of the common words' postings, each chunk exactly scored.
    pruning = KeywordPruning(postings_budget=30, rescore_depth=10)
    pruned = _search("و در کهکشان", filters, pruning, 10)
    assert pruned[0].chunk_id == rare.document.chunks.get().pk
    assert len(pruned) == 10
    assert [c.score for c in pruned] == pytest.approx([exact[c.chunk_id] for c in pruned])
    assert [c.score for c in pruned] == sorted((c.score for c in pruned), reverse=True)


@pytest.mark.django_db
def test_a_question_of_common_words_only_is_answered_from_its_rarest_word(
    collection: Collection, embedder: CountingEmbedder
) -> None:
    filters = _corpus(collection)
    exact = {c.chunk_id: c.score for c in _search("و در این", filters, None, 100)}
    pruned = _search("و در این", filters, KeywordPruning(postings_budget=12, rescore_depth=20), 5)
    assert len(pruned) == 5
    assert [c.score for c in pruned] == pytest.approx([exact[c.chunk_id] for c in pruned])


def test_the_rarest_terms_are_read_while_they_fit_the_budget() -> None:
    frequencies = {
        ("simple", "a"): 900,
        ("simple", "b"): 20,
        ("simple", "c"): 70,
        ("english", "d"): 0,
    }
    plan = terms_plan(frequencies, total=1000, budget=100)
    assert [t for t, _ in plan.read] == [("simple", "b"), ("simple", "c")]
    assert [t for t, _ in plan.later] == [("simple", "a")]
    # The rarer the term, the heavier it weighs (idf); a term in no chunk is dropped.
    assert plan.read[0][1] > plan.read[1][1] > plan.later[0][1]
    alone = terms_plan({("simple", "a"): 900}, total=1000, budget=100)
    assert [t for t, _ in alone.read] == [("simple", "a")]


def test_pruning_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="positive"):
        KeywordPruning(postings_budget=0, rescore_depth=10)
    with pytest.raises(ValueError, match="positive"):
        KeywordPruning(postings_budget=10, rescore_depth=0)
    with override_settings(RAG_KEYWORD_POSTINGS_BUDGET=0):
        assert keyword_pruning_configured() is None
    with override_settings(RAG_KEYWORD_POSTINGS_BUDGET=1000, RAG_KEYWORD_RESCORE_DEPTH=50):
        assert keyword_pruning_configured() == KeywordPruning(1000, 50)
    assert keyword_pruning_configured(0) is None
