"""Persian spelling variants reach the same keyword index entries (real PostgreSQL)."""

from __future__ import annotations

import pytest

from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Collection
from apps.corpus.search.legs import KeywordQuery, SearchFilters, chunks_keyword_search
from apps.corpus.text.search_form import search_form
from tests.conftest import CountingEmbedder


@pytest.mark.parametrize(
    "variants",
    [
        ("می‌شمرند", "می شمرند", "میشمرند"),
        ("نمی‌دانند", "نمی دانند", "نمیدانند"),
        ("کتاب‌ها", "کتاب ها", "کتابها"),
        ("کتاب‌های", "کتاب های", "کتابهای"),
        ("بزرگ‌ترین", "بزرگ ترین", "بزرگترین"),
    ],
)
def test_non_joiner_space_and_nothing_give_the_same_search_words(
    variants: tuple[str, ...],
) -> None:
    assert len({search_form(v) for v in variants}) == 1


@pytest.mark.parametrize(
    "variants",
    [
        ("مسئله", "مسیله"),  # yeh with hamza, or bare
        ("رئیس", "رییس"),
        ("مسأله", "مساله"),  # alef with hamza above, or bare
        ("مؤسسه", "موسسه"),  # waw with hamza, or bare
        ("خانۀ", "خانه"),  # heh with yeh above, or bare
        ("إسلام", "اسلام"),  # alef with hamza below, or bare
    ],
)
def test_a_hamza_written_or_left_out_gives_the_same_search_words(
    variants: tuple[str, ...],
) -> None:
    assert len({search_form(v) for v in variants}) == 1


@pytest.mark.parametrize("word", ["تنها", "میز", "دختر", "ماه"])
def test_short_stems_stay_whole(word: str) -> None:
    assert search_form(word) == word


def test_other_scripts_pass_through() -> None:
    assert search_form("Leave requests (v2) go to HR.") == "Leave requests (v2) go to HR."


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["کتاب‌ها را می‌شمرند", "کتاب ها را می شمرند", "کتابها میشمرند"])
def test_a_persian_query_finds_the_passage_however_it_joins_its_affixes(
    collection: Collection, embedder: CountingEmbedder, query: str
) -> None:
    text = "# فهرست\n\nکارمندان هر سال کتاب‌ها را می‌شمرند و در دفتر ثبت می‌کنند."
    document = document_submit(collection=collection, filename="fa.md", data=text.encode())
    document_process(document_id=document.document.pk)
    noise = document_submit(
        collection=collection, filename="noise.md", data="# دیگر\n\nسلام".encode()
    )
    document_process(document_id=noise.document.pk)

    found = chunks_keyword_search(
        query=KeywordQuery.from_text(query),
        filters=SearchFilters(collection_ids=(collection.pk,)),
        limit=5,
    )
    assert found and found[0].chunk_id == document.document.chunks.get().pk
