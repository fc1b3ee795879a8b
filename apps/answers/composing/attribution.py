"""Sources for an answer whose model wrote no [cN] markers.

Small models often ignore the citation instructions yet copy or closely paraphrase the
context. Each sentence of such an answer is attributed to the context passage whose words
it repeats most, when it repeats enough of them; the result is stored and shown as
*attributed* (found after the fact by overlap), never as *cited* (the model's own claim).
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.answers.composing.terms import content_terms
from apps.answers.retrieval.types import ContextChunk, ContextWindow
from apps.corpus.text import sentence_spans

# A sentence shorter than this says too little to be matched to a passage ("Yes, it is.").
MIN_CONTENT_WORDS = 4
# Share of a sentence's content words found in one passage for it to count as taken from it:
# a copied sentence scores near 1, a paraphrase keeps most of the nouns and numbers, and a
# sentence of the model's own shares little beyond the topic words.
MIN_OVERLAP = 0.6
# Words this short are mostly function words in English and Persian ("the", "of", "از", "به").
MIN_WORD_CHARS = 3


@dataclass(frozen=True)
class Attribution:
    alias: str
    position: int  # the end of the attributed sentence in the answer text
    overlap: float


def _content_words(text: str) -> set[str]:
    # Stop-words out too: a table row of "this | that | which | there" says nothing, and
    # must not be matched to a passage that happens to use the same small words.
    return {w for w in content_terms(text) if len(w) >= MIN_WORD_CHARS}


def answer_attribute(*, text: str, context: ContextWindow) -> list[Attribution]:
    """One attribution per sentence that overlaps a passage enough, in answer order."""
    passages = [(c, _content_words(c.chunk.text)) for c in context.chunks]
    found: list[Attribution] = []
    for start, end in sentence_spans(text, abbreviations=False, persian_marks=True):
        sentence = _content_words(text[start:end])
        if len(sentence) < MIN_CONTENT_WORDS:
            continue
        best = _best_passage(sentence, passages)
        if best is not None:
            found.append(Attribution(best[0].alias, len(text[:end].rstrip()), best[1]))
    return found


def _best_passage(
    sentence: set[str], passages: list[tuple[ContextChunk, set[str]]]
) -> tuple[ContextChunk, float] | None:
    best: tuple[ContextChunk, float] | None = None
    for chunk, vocabulary in passages:
        overlap = len(sentence & vocabulary) / len(sentence)
        # Ties keep the earlier passage: the context is in rank order.
        if overlap >= MIN_OVERLAP and (best is None or overlap > best[1]):
            best = (chunk, overlap)
    return best
