"""A multi-hop answer from the chain retrieval followed: one cited sentence per hop.

For "What is the seat of the county where Van Hook Township is located?" retrieval found the
bridge "Mountrail County" in the township's passage and searched "Mountrail County seat". The
answer states the first hop (the sentence that names the bridge, cited to its passage) and
then the last hop (the best sentence for the bridge's own query from another passage, cited
to that one): the last hop holds the answer, which the question's own words rarely reach.

When no passage answers the bridge's query, there is no chain: the composer answers the
question as it answers any other, held to the refusal threshold. The offline bridges are read
from capitalised words, so on real documents most questions that take this path are single-hop
("Table of Contents 3", "APT_CONFIG", a sentence-initial "Once"): a lone first-hop sentence and
a note about a bridge the question never asked about would contradict the answer it follows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from apps.answers.composing.candidates import Evidence, Scored
from apps.answers.composing.layout import cite, clip
from apps.answers.retrieval.types import Bridge, ContextWindow

EvidenceOf = Callable[[str], Awaitable[Evidence]]


@dataclass(frozen=True)
class Chain:
    pieces: tuple[str, ...]
    # The support sent: the better of the question's and the last hop's evidence. The last hop
    # is not held to the refusal threshold: its sentence must already name the bridge, in
    # another passage, and the threshold was set for whole questions, which a hop's two or
    # three search words rarely reach ("Mountrail County seat" against "The Mountrail County
    # Courthouse in Stanley ...").
    value: float


async def chain_compose(
    *,
    bridges: Sequence[Bridge],
    evidence: Evidence,
    evidence_of: EvidenceOf,
    context: ContextWindow,
    max_chars: int,
) -> Chain | None:
    """The first bridge whose hops are both found, else None (the composer answers as for any
    question)."""
    aliases = {c.alias: c.chunk.chunk_id for c in context.chunks}
    for bridge in bridges:
        first = _first_hop(bridge, evidence.scored, aliases)
        if first is None:
            continue
        hop = await evidence_of(bridge.query)
        last = _last_hop(bridge, hop, aliases, first)
        if last is not None:
            pieces = (_cited(first, max_chars), " ", _cited(last, max_chars))
            return Chain(pieces, max(evidence.value, hop.value))
    return None


def _first_hop(bridge: Bridge, scored: Sequence[Scored], aliases: dict[str, int]) -> Scored | None:
    """The best sentence of the bridge's own passage that names it."""
    naming = [
        s
        for s in scored
        if aliases.get(s.sentence.alias) == bridge.chunk_id
        and bridge.entity.casefold() in s.sentence.text.casefold()
    ]
    return max(naming, key=lambda s: s.score, default=None)


def _last_hop(
    bridge: Bridge, hop: Evidence, aliases: dict[str, int], first: Scored
) -> Scored | None:
    """The best sentence for the bridge's query from another passage than the first hop's,
    about the bridge: naming it, or in a passage or section whose title names it."""
    entity = bridge.entity.casefold()
    others = [
        s
        for s in hop.scored
        if aliases.get(s.sentence.alias) != bridge.chunk_id
        and s.sentence.text != first.sentence.text
        and (entity in s.sentence.text.casefold() or entity in s.sentence.section.casefold())
    ]
    return max(others, key=lambda s: s.score, default=None)


def _cited(s: Scored, max_chars: int) -> str:
    return cite(clip(s.sentence.text, max_chars), s.sentence.alias)
