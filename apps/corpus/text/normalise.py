"""Text normalisation and word tokens."""

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


def normalise_text(text: str) -> str:
    """NFC, Persian letter forms and digits unified, harakat dropped, ZWNJ kept (single, not
    around spaces), spaces collapsed; line breaks are kept."""
    text = unicodedata.normalize("NFC", text).translate(_PERSIAN_LETTERS)
    text = _DIACRITICS.sub("", text)
    text = _ZWNJ_RUNS.sub(ZWNJ, text)
    text = _SPACES.sub(" ", text)
    return text.strip()


_WORD = re.compile(r"\w+(?:[\u200c'’-]\w+)*", re.UNICODE)


def words(text: str) -> list[str]:
    """Words, keeping ZWNJ-joined Persian words and hyphenated or apostrophised ones whole."""
    return _WORD.findall(text)
