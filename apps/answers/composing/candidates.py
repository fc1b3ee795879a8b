"""The candidate types of sentence choice: a sentence of the context window, that sentence
scored against the question, and the evidence an answer is composed from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from apps.answers.composing.structure import PROSE

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Sentence:
    text: str
    alias: str
    rank: int  # the chunk's position in the context window, 0 = best
    position: int  # the sentence's position in its chunk
    terms: frozenset[str]
    step: bool  # reads like a step of a procedure
    kind: str = PROSE  # the source line it came from: PROSE, ITEM, STEP, ROW or CODE (structure.py)
    line: int = 0  # that line's position in its chunk
    intro: bool = False  # announces the list or table that follows it
    extent: str = ""  # what is matched and embedded: the text, with what it announces or heads
    heading_terms: frozenset[str] = frozenset()  # of its chunk's title and heading path
    section: str = ""  # that title and heading path as written
    language: str = ""  # its chunk's
    quoted: str = ""  # its line's own form, quoted as is: code's lines, a row under its header
    # A dependent sentence ("The default is 0.") names its subject in an earlier sentence of
    # its paragraph: that sentence's position in the chunk (-1: none), matched and shown with it.
    subject: int = -1
    lent: frozenset[str] = frozenset()  # of `terms`, those only its subject has
    entry: frozenset[str] = frozenset()  # an entry head's: the terms of the name it opens with
    # A dependent sentence of another entry than the one the question names: not chosen.
    other_entry: bool = False


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    similarity: float  # rescaled to 0-1; 0 when the sentence was not embedded
    overlap: float
    score: float
    vector: Vector | None


@dataclass(frozen=True)
class Evidence:
    scored: tuple[Scored, ...]
    chosen: tuple[Scored, ...]
    value: float
