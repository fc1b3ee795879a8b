"""Refusals that read what the chosen sentences state and what the passages mention, after the
evidence thresholds (extractive.ExtractiveComposer.refusal_reason): a figure or a measure
asked for and none stated (answer_type.py, measures.py), a name no passage holds
(identifiers.py)."""

from __future__ import annotations

from apps.answers.composing.answer_type import quantity_unstated
from apps.answers.composing.candidates import Evidence
from apps.answers.composing.identifiers import unmentioned_identifiers
from apps.answers.composing.measures import measure_unstated
from apps.answers.retrieval.types import ContextWindow


def content_refusal(
    query: str, evidence: Evidence, context: ContextWindow, *, refuse_unmentioned: bool
) -> str | None:
    """Why the passages do not hold what the question asks for, or None."""
    chosen = [s.sentence.text for s in evidence.chosen]
    if quantity_unstated(query, chosen):
        return "asks for a number, none stated"
    measure = measure_unstated(query, chosen)
    if measure is not None:
        return f"asks for a {measure}, none stated"
    if not refuse_unmentioned:
        return None
    passages = (  # a name in a title, a heading or a file name is mentioned too
        f"{c.chunk.title}\n{c.chunk.heading}\n{c.chunk.filename}\n{c.text}" for c in context.chunks
    )
    unmentioned = unmentioned_identifiers(query, passages)
    return f"names {', '.join(unmentioned)}, which no passage mentions" if unmentioned else None
