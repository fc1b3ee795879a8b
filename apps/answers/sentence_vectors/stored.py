"""The composer's sentence vectors from the store, the embedder only for what is not stored."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from apps.answers.composing.vectors import Matrix, text_hash
from apps.answers.sentence_vectors.selectors import sentence_vectors_get
from apps.corpus.search.embedders import Embedder
from ragplatform.db_threads import db_call


class StoredSentenceVectors:
    """`composing.vectors.SentenceVectors` over the stored vectors of the embedder's model:
    one query for all the texts, then the embedder for the texts none is stored for (a chunk
    not filled yet, a best chunk cut to the context's budget)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def passages(self, texts: Sequence[str]) -> Matrix:
        keys = [text_hash(t) for t in texts]
        found = await db_call(sentence_vectors_get, lane="search")(
            model_id=self._embedder.model_id, hashes=keys
        )
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            made = await asyncio.to_thread(
                self._embedder.embed_passages, [texts[i] for i in missing]
            )
            found.update({keys[i]: made[k] for k, i in enumerate(missing)})
        if not keys:
            return np.zeros((0, self._embedder.dimensions), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)
