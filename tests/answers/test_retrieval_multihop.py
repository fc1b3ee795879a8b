"""Offline multi-hop: the bridge read from the first hop, and the hop that searches it."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from apps.answers.retrieval.multihop import bridges_find
from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.routing.types import Strategy
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.search.legs import SearchFilters
from tests.answers.fakes import retrieved_chunk
from tests.conftest import CountingEmbedder

QUESTION = "What is the seat of the county where Van Hook Township is located?"
TOWNSHIP = (
    "Van Hook Township is a township in Mountrail County, North Dakota, United States. "
    "Its population was 262 at the 2000 census."
)
COUNTY = (
    "Mountrail County is a county in the U.S. state of North Dakota. Its county seat is Stanley."
)


def test_the_bridge_is_the_name_the_first_passage_adds_to_the_question() -> None:
    found = [retrieved_chunk(1, TOWNSHIP, title="Van Hook Township")]

    bridges = bridges_find(query=QUESTION, found=found)

    assert bridges[0].entity == "Mountrail County"
    assert bridges[0].chunk_id == 1
    # The passage holds "county" (and the township's name): "seat located" is left to search.
    assert bridges[0].query == "Mountrail County seat located"
    assert all(b.entity != "Van Hook Township" for b in bridges)  # the question names it


def test_a_title_the_question_does_not_name_is_a_bridge() -> None:
    found = [retrieved_chunk(1, "He was born in 1950.", title="Edward Baring")]
    bridges = bridges_find(
        query="Who was the father of the founder of Baring Brothers?", found=found
    )
    assert [b.entity for b in bridges] == ["Edward Baring"]


def test_text_without_names_gives_no_bridge() -> None:
    found = [retrieved_chunk(1, "کارمندان سالانه بیست و شش روز مرخصی دارند.", title="مرخصی")]
    assert bridges_find(query="مرخصی سالانه چند روز است؟", found=found) == []


@pytest.mark.django_db
def test_the_complex_strategy_reaches_the_passage_only_the_bridge_leads_to(
    embedder: CountingEmbedder,
) -> None:
    collection = collection_get_or_create(name="Places")
    texts = {
        "township.md": f"# Van Hook Township\n\n{TOWNSHIP}",
        "county.md": f"# Mountrail County\n\n{COUNTY}",
    }
    texts.update(
        {f"other{i}.md": f"# Town {i}\n\nTown {i} has a lake and a school." for i in range(5)}
    )
    for name, text in texts.items():
        result = document_submit(collection=collection, filename=name, data=text.encode())
        document_process(document_id=result.document.pk)
    retriever = Retriever(embedder=embedder, config=RetrievalConfig(final_k=3))
    filters = SearchFilters(collection_ids=(collection.pk,))

    def files(strategy: str) -> list[str]:
        request = RetrievalRequest(query=QUESTION, filters=filters, strategy=Strategy(strategy))
        result = async_to_sync(retriever.retrieve)(request)
        return [c.filename for c in result.chunks]

    complex_result = async_to_sync(retriever.retrieve)(
        RetrievalRequest(query=QUESTION, filters=filters, strategy=Strategy.COMPLEX)
    )
    assert [b.entity for b in complex_result.bridges][:1] == ["Mountrail County"]
    assert complex_result.trace.settings["hop-1:made_by"] == "bridge"
    assert any(
        v.kind == "hop-1" and v.text.startswith("Mountrail County seat")
        for v in complex_result.trace.variants
    )
    assert {"township.md", "county.md"} <= set(files("complex")[:2])
