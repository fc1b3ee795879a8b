"""Multi-hop answers: a cited sentence per hop, or which hop is missing."""

from __future__ import annotations

from apps.answers.composing import ComposeRequest, Refusal, SupportSignal
from apps.answers.retrieval.types import Bridge
from apps.answers.routing.types import Intent
from apps.corpus.text import Language
from tests.answers.compose import cited, composer, run, text_of, window

QUESTION = "What is the seat of the county where Van Hook Township is located?"
TOWNSHIP = (
    "Van Hook Township",
    "Van Hook Township is a township in Mountrail County, North Dakota, United States. "
    "Its population was 262 at the 2000 census.",
)
COUNTY = (
    "Mountrail County",
    "Mountrail County is a county in the U.S. state of North Dakota. "
    "Its county seat is Stanley. The county was created in 1873.",
)
LAKE = ("Lake Sakakawea", "Lake Sakakawea is a reservoir on the Missouri River.")
BRIDGE = Bridge(entity="Mountrail County", query="Mountrail County seat located", chunk_id=1)


def ask(*documents: tuple[str, str], bridges: tuple[Bridge, ...] = (BRIDGE,)) -> ComposeRequest:
    return ComposeRequest(
        query=QUESTION,
        intent=Intent.FACTUAL_QUESTION,
        language=Language.EN,
        context=window(*documents),
        bridges=bridges,
    )


async def test_the_answer_cites_the_first_hop_then_states_the_last() -> None:
    events = await run(composer(), ask(TOWNSHIP, COUNTY, LAKE))

    text = text_of(events)
    first = text.index("Van Hook Township is a township in Mountrail County")
    assert text.index("Its county seat is Stanley [c2].") > first
    assert not any(isinstance(e, Refusal) for e in events)
    _, marks = cited(events)
    assert [m.alias for m in marks] == ["c1", "c2"]
    # A complete chain's support says so: the refusal threshold does not hold it.
    assert [e.source for e in events if isinstance(e, SupportSignal)] == ["chain-evidence"]


async def test_a_missing_last_hop_is_named_instead_of_answered() -> None:
    events = await run(composer(min_evidence=0.05), ask(TOWNSHIP, LAKE))

    text = text_of(events)
    assert "Mountrail County [c1]" in text or "Mountrail County, North Dakota" in text
    assert "do not say what the question asks about it (Mountrail County seat located)" in text
    assert "Lake Sakakawea" not in text
    signals = [e for e in events if isinstance(e, SupportSignal)]
    assert [s.source for s in signals] == ["evidence-coverage"]  # held to the threshold


async def test_without_bridges_the_question_is_answered_as_before() -> None:
    with_chain = text_of(await run(composer(), ask(TOWNSHIP, COUNTY, LAKE)))
    plain = text_of(await run(composer(), ask(TOWNSHIP, COUNTY, LAKE, bridges=())))
    assert "do not say" not in plain
    assert plain != with_chain
