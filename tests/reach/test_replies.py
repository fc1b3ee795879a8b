"""How a stored answer reads through another client's door: markers where the chat page puts
its chips, numbered as the chat numbers them, and the sources list after the text."""

from __future__ import annotations

from apps.answers.models import Citation, CitationKind
from apps.reach.asking.replies import Source, source_line, sources_block, text_marked

ANSWER = "Leave is twenty-six days. Requests go to your manager. Days do not carry over."


def _citation(
    alias: str, position: int | None, pk: int, kind: str = CitationKind.CITED
) -> Citation:
    return Citation(pk=pk, alias=alias, position=position, kind=kind, title=alias)


def test_markers_stand_at_each_citations_place_numbered_by_their_order_in_the_answer() -> None:
    citations = [
        _citation("c3", 54, pk=1),  # stored first, but it stands later in the text
        _citation("c1", 25, pk=2),
        _citation("c7", None, pk=3),  # no offset: at the end, as the chat page puts it
        _citation("c9", 10, pk=4, kind=CitationKind.ATTRIBUTED),  # attributed: no marker
    ]

    marked = text_marked(ANSWER, citations=citations)

    assert marked == (
        "Leave is twenty-six days.[1] Requests go to your manager.[2] Days do not carry over.[3]"
    )


def test_two_markers_at_one_place_keep_their_arrival_order() -> None:
    citations = [_citation("c3", 25, pk=1), _citation("c10", 25, pk=2)]

    assert text_marked(ANSWER, citations=citations).startswith("Leave is twenty-six days.[1][2] ")


def test_the_sources_list_names_title_file_page_and_link() -> None:
    source = Source(
        number=1,
        kind="cited",
        title="Leave",
        source_file="leave.md",
        document=9,
        chunk=4,
        chunk_index=0,
        page=2,
        snippet="twenty-six days",
        url="https://answers.example.org/documents/9/read/?chunk=0#cited",
    )

    assert source_line(source) == (
        "[1] Leave (leave.md, page 2) https://answers.example.org/documents/9/read/?chunk=0#cited"
    )
    assert sources_block([source]) == f"\n\nSources:\n{source_line(source)}"
    assert sources_block([]) == ""
