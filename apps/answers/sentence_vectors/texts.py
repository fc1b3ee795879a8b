"""The texts a chunk's sentences are embedded as: the composer's own candidates of that chunk."""

from __future__ import annotations

from apps.answers.composing.sentences import embedded_texts, sentence_candidates
from apps.answers.retrieval.types import Candidate, ContextChunk, ContextWindow, RetrievedChunk
from apps.corpus.search.legs import ChunkRow


def chunk_sentence_texts(row: ChunkRow) -> list[str]:
    """Each distinct text the extractive composer would embed for a sentence of this chunk, in
    its order. Built by the composer's own `sentence_candidates` from a context window holding
    the chunk alone, as retrieval hydrates it: a sentence's text depends on its chunk's text,
    title and heading, never on its rank or the chunks beside it, so these are the very texts a
    turn asks vectors for (a best chunk cut to the context's budget asks for a subset)."""
    chunk = RetrievedChunk(**vars(row), score=0.0, candidate=Candidate(chunk_id=row.chunk_id))
    window = ContextWindow((ContextChunk(alias="c1", chunk=chunk, text=row.text),), 0, 0, ())
    candidates = sentence_candidates(window, max_chunks=1)
    return list(dict.fromkeys(text for s in candidates for text in embedded_texts(s)))
