"""The retrieval pipeline on the real PostgreSQL, with a small fake embedder."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
from apps.answers.retrieval.types import RetrievalRequest, RetrievalResult
from apps.corpus.documents.selectors import UnknownCollection, collection_ids_resolve
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.models import Collection
from apps.corpus.search.legs import SearchFilters
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

DOCS = {
    "vpn.md": "# VPN\n\nThe company VPN uses WireGuard. Install the client and import the profile.",
    "leave.md": "# Leave\n\nEmployees take twenty-six days of annual leave every year.",
    "expenses.md": "# Expenses\n\nTravel expenses are refunded within ten working days.",
    "fa.md": "# مرخصی\n\nکارمندان سالانه بیست و شش روز مرخصی دارند.",
}


def _load(embedder: CountingEmbedder) -> Collection:
    handbook = collection_get_or_create(name="Handbook")
    for name, text in DOCS.items():
        result = document_submit(
            collection=handbook,
            filename=name,
            data=text.encode(),
            domain="hr",
            document_type="policy",
        )
        document_process(document_id=result.document.pk)
    other = collection_get_or_create(name="Other")
    result = document_submit(collection=other, filename="vpn2.md", data=b"VPN WireGuard notes.")
    document_process(document_id=result.document.pk)
    return handbook


def _retrieve(
    embedder: CountingEmbedder, query: str, filters: SearchFilters | None = None, **kw: object
) -> RetrievalResult:
    retriever = Retriever(embedder=embedder, config=RetrievalConfig(final_k=5))
    request = RetrievalRequest(query=query, filters=filters or SearchFilters(), **kw)  # type: ignore[arg-type]
    return async_to_sync(retriever.retrieve)(request)


def _files(result: RetrievalResult) -> list[str]:
    return [c.filename for c in result.chunks]


def test_hybrid_finds_the_passage_and_traces_every_stage(embedder: CountingEmbedder) -> None:
    _load(embedder)
    result = _retrieve(embedder, "how do I install the VPN client")

    assert _files(result)[0] in {"vpn.md", "vpn2.md"}
    top = result.chunks[0].candidate
    assert top.dense_rank is not None and top.keyword_rank is not None
    assert {
        "embed:original",
        "dense:original",
        "keyword:original",
        "fusion:original",
        "rerank",
    } <= set(result.trace.timings_ms)
    assert result.trace.models["embedder"] == embedder.model_id


def test_filters_restrict_by_collection_domain_type_and_language(
    embedder: CountingEmbedder,
) -> None:
    handbook = _load(embedder)
    only_handbook = _retrieve(
        embedder, "VPN WireGuard", SearchFilters(collection_ids=(handbook.pk,))
    )
    assert "vpn2.md" not in _files(only_handbook) and "vpn.md" in _files(only_handbook)
    assert _files(_retrieve(embedder, "VPN", SearchFilters(domains=("finance",)))) == []
    assert set(_files(_retrieve(embedder, "leave", SearchFilters(languages=("fa",))))) == {"fa.md"}
    typed = _retrieve(embedder, "VPN", SearchFilters(document_types=("policy",)))
    assert "vpn2.md" not in _files(typed)


def test_unknown_collection_is_a_validation_error(embedder: CountingEmbedder) -> None:
    _load(embedder)
    with pytest.raises(UnknownCollection, match="Nope"):
        collection_ids_resolve(names=["Handbook", "Nope"])


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "?!...;;",
        "'; DROP TABLE corpus_chunk; --",
        "leave " * 2000,
        "VPN یا مرخصی mixed query",
        "\x00 null byte",
    ],
)
def test_bad_queries_give_results_or_nothing_never_an_error(
    embedder: CountingEmbedder, query: str
) -> None:
    _load(embedder)
    result = _retrieve(embedder, query)
    assert len(result.chunks) <= 5
    assert Collection.objects.filter(name="Handbook").exists()  # nothing was dropped


def test_mixed_script_query_reaches_both_languages(embedder: CountingEmbedder) -> None:
    _load(embedder)
    files = _files(_retrieve(embedder, "مرخصی annual leave"))
    assert "fa.md" in files and "leave.md" in files


def test_moderate_strategy_records_hyde_skipped_without_a_chat_model(
    embedder: CountingEmbedder,
) -> None:
    _load(embedder)
    result = _retrieve(embedder, "leave days", strategy="moderate")
    hyde = [v for v in result.trace.variants if v.kind == "hyde"]
    assert hyde and hyde[0].skipped_reason == "no chat model"


def test_complex_strategy_adds_a_recorded_hop(embedder: CountingEmbedder) -> None:
    _load(embedder)
    result = _retrieve(embedder, "VPN install", strategy="complex")
    kinds = [v.kind for v in result.trace.variants]
    assert kinds[0] == "original" and "hop-1" in kinds
    assert result.trace.settings["hop-1:made_by"] == "bridge"  # "WireGuard", named beside "VPN"
    assert len({c.chunk_id for c in result.chunks}) == len(result.chunks)  # de-duplicated


def test_keyword_scorings_both_rank_the_matching_chunk_first(embedder: CountingEmbedder) -> None:
    _load(embedder)
    for scoring in ("bm25", "ts_rank_cd"):
        retriever = Retriever(
            embedder=embedder, config=RetrievalConfig(mode="keyword", keyword_scoring=scoring)
        )
        result = async_to_sync(retriever.retrieve)(
            RetrievalRequest(query="travel expenses refunded")
        )
        assert _files(result)[0] == "expenses.md", scoring
