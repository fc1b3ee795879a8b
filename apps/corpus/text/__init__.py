"""The text toolkit shared by ingestion and answering: one normaliser, one language
detector, one sentence splitter and one greeting lexicon.

A query and the text it should match are normalised the same way, and every part of the
platform that asks "which language is this?" or "where does this sentence end?" gets the
same answer. Variants for one caller (the router's feature folding, the citation counter's
Persian marks) are built on these functions or chosen by their parameters.
"""

from apps.corpus.text.fences import fence_marks_removed, fenced
from apps.corpus.text.greetings import GREETING_KINDS, greeting_kind, greeting_pattern, is_greeting
from apps.corpus.text.language import Language, detect_language, estimate_tokens, search_config_for
from apps.corpus.text.normalise import ZWNJ, normalise_text, words
from apps.corpus.text.sentences import last_sentence_start, sentence_spans, split_sentences
from apps.corpus.text.tables import table_rules_removed

__all__ = [
    "GREETING_KINDS",
    "ZWNJ",
    "Language",
    "detect_language",
    "estimate_tokens",
    "fence_marks_removed",
    "fenced",
    "greeting_kind",
    "greeting_pattern",
    "is_greeting",
    "last_sentence_start",
    "normalise_text",
    "search_config_for",
    "sentence_spans",
    "split_sentences",
    "table_rules_removed",
    "words",
]
