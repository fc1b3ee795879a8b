"""Where the extractive composer's sentence vectors come from: the one seam it reads them by.

Scoring a sentence needs its passage vector, and running the model for it is most of an
answer's time (about 2.6 s of 3 s on the guide, on a busy 2-core machine). A task worker can
compute those vectors ahead of any question (`sentence_vectors/`); the composer asks this seam
for the vectors of the texts it chose and gets the stored ones, with the model run only for
texts nothing stored. A vector depends on the model and the exact text alone, so a stored one
is the very vector the model would return now, and answers do not change.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from apps.corpus.search.embedders import Embedder

Matrix = npt.NDArray[np.float32]


class SentenceVectors(Protocol):
    async def passages(self, texts: Sequence[str]) -> Matrix:
        """One passage vector per text, in order (rows of a len(texts) x dimensions matrix)."""
        ...


class EmbeddedSentenceVectors:
    """Every text through the embedder, now: what the composer did before vectors were stored,
    and what it does wherever none are (tests, evaluations without a database)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def passages(self, texts: Sequence[str]) -> Matrix:
        return await asyncio.to_thread(self._embedder.embed_passages, list(texts))


def text_hash(text: str) -> str:
    """The key of a text's stored vector (with its model): the sha256 of the text embedded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
