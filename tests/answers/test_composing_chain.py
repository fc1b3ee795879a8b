"""Multi-hop answers: a cited sentence per hop, or without the last hop a plain answer."""

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


async def test_without_the_last_hop_the_question_is_answered_as_any_other() -> None:
    composer_ = composer(min_evidence=0.05)
    with_bridge = await run(composer_, ask(TOWNSHIP, LAKE))
    plain = await run(composer_, ask(TOWNSHIP, LAKE, bridges=()))

    assert text_of(with_bridge) == text_of(plain)
    assert "do not say what the question asks" not in text_of(with_bridge)
    signals = [e for e in with_bridge if isinstance(e, SupportSignal)]
    assert [s.source for s in signals] == ["evidence-coverage"]  # held to the threshold


# A single-hop question on a manual the offline bridge finder still reads a "bridge" from: a
# capitalised name in the best passage that no other passage answers about.
MANUAL = (
    "Offline upgrades",
    "Chapter 2: Using APT on both machines. Set APT_CONFIG to the disc's apt.conf before you "
    "run apt-get update. The update then writes the package lists to the disc.",
)
SIZES = ("Disc sizes", "A full upgrade usually needs a disc of several hundred megabytes.")


async def test_a_single_hop_question_taken_for_a_chain_reads_as_a_normal_answer() -> None:
    question = "Which variable points apt-get at the disc's apt.conf?"
    bridge = Bridge(entity="APT_CONFIG", query="APT_CONFIG variable points", chunk_id=1)
    request = ComposeRequest(
        query=question,
        intent=Intent.FACTUAL_QUESTION,
        language=Language.EN,
        context=window(MANUAL, SIZES),
        bridges=(bridge,),
    )

    text = text_of(await run(composer(min_evidence=0.05), request))

    assert "APT_CONFIG" in text
    assert "The documents name" not in text
    assert "(APT_CONFIG variable points)" not in text


async def test_without_bridges_the_question_is_answered_as_before() -> None:
    with_chain = text_of(await run(composer(), ask(TOWNSHIP, COUNTY, LAKE)))
    plain = text_of(await run(composer(), ask(TOWNSHIP, COUNTY, LAKE, bridges=())))
    assert "do not say" not in plain
    assert plain != with_chain
