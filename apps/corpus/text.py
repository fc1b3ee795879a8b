"""Text normalisation, language detection, sentence splitting and token estimates.

Shared by ingestion (chunks) and answering (queries, extractive sentences), so a query
and the text it should match are always normalised the same way.
"""

from __future__ import annotations

import re
import unicodedata

ZWNJ = "\u200c"

# Arabic code points that Persian writes with its own letter; unifying them lets
# "كتاب" (Arabic kaf) match "کتاب" (Persian keheh).
_PERSIAN_LETTERS = str.maketrans(
    {
        "\u064a": "\u06cc",  # ARABIC YEH -> FARSI YEH
        "\u0649": "\u06cc",  # ALEF MAKSURA -> FARSI YEH
        "\u0643": "\u06a9",  # ARABIC KAF -> KEHEH
        "\u0629": "\u0647",  # TEH MARBUTA -> HEH
        "\u0640": None,  # TATWEEL is decoration only
        **{chr(0x0660 + d): str(d) for d in range(10)},  # Arabic-Indic digits
        **{chr(0x06F0 + d): str(d) for d in range(10)},  # Persian digits
    }
)
# Short vowel marks (harakat) are rarely written and break matching when present.
_DIACRITICS = re.compile("[\u064b-\u065f\u0670]")
_SPACES = re.compile(r"[ \t\f\v\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_ZWNJ_RUNS = re.compile(f"(?:\\s*{ZWNJ}\\s*)+")
_ARABIC_SCRIPT = re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_LATIN = re.compile("[A-Za-z]")


def normalise_text(text: str) -> str:
    """NFC, Persian letter forms unified, ZWNJ kept (single, not around spaces), spaces collapsed."""
    text = unicodedata.normalize("NFC", text).translate(_PERSIAN_LETTERS)
    text = _DIACRITICS.sub("", text)
    text = _ZWNJ_RUNS.sub(ZWNJ, text)
    text = _SPACES.sub(" ", text)
    return text.strip()


def detect_language(text: str) -> str:
    """'fa' when Arabic-script letters outnumber Latin ones, else 'en'."""
    arabic = len(_ARABIC_SCRIPT.findall(text))
    latin = len(_LATIN.findall(text))
    return "fa" if arabic > latin else "en"


def search_config_for(language: str) -> str:
    """PostgreSQL text-search configuration for a language: no Persian stemmer exists."""
    return "english" if language == "en" else "simple"


_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "al",
        "fig",
        "figs",
        "eq",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "no",
        "approx",
        "cf",
        "ca",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
    ]
)
_SENTENCE_END = re.compile(r"[.!?؟…]+[\"'”’)\]]*(?=\s+|$)|\n+")


def split_sentences(text: str) -> list[str]:
    """Split into sentences (English and Persian), keeping abbreviations and decimals intact."""
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if match.group().startswith(".") and _is_abbreviation(text, match.start()):
            continue
        piece = text[start:end].strip()
        if piece:
            sentences.append(piece)
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _is_abbreviation(text: str, dot: int) -> bool:
    word = re.search(r"([A-Za-z.]+)$", text[:dot])
    if not word:
        return False
    token = word.group(1).lower().strip(".")
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


_WORD = re.compile(r"\w+(?:[\u200c'’-]\w+)*", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def estimate_tokens(text: str) -> int:
    """Subword tokens for the bundled multilingual model, estimated without its tokenizer.

    Measured on mixed English text the XLM-R style tokenizer gives about 1.3 tokens per
    word; Persian words split more (about 1.6). Used for budgets, not billing.
    """
    count = len(words(text))
    factor = 1.6 if detect_language(text) == "fa" else 1.3
    return max(1, round(count * factor)) if text.strip() else 0
