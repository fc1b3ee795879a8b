"""The form of text that the keyword index and keyword queries both see.

Persian writes the same word with a zero-width non-joiner, a space or nothing between a stem
and its verbal prefix or plural/comparative suffix ("می‌شمرند", "می شمرند", "میشمرند";
"کتاب‌ها", "کتاب ها", "کتابها"). PostgreSQL's parser keeps a non-joiner inside a word, so a
query written with a space found nothing written with a non-joiner. Here every such affix is
detached into a word of its own, the same way at ingestion and at query time, so all three
spellings give the same search words. Text in other scripts passes through unchanged.
"""

from __future__ import annotations

import re

from apps.corpus.text.normalise import ZWNJ

# Longest first, so "هایی" is not read as "ها" + "یی".
_PREFIXES = ("نمی", "می")
_SUFFIXES = ("هایی", "های", "ترین", "ها", "تر")
_MIN_STEM = 3  # letters left after detaching; shorter stems are words of their own ("تنها")
# Letters carrying a hamza (or a yeh above) that writers also leave bare: "مسئله" / "مساله",
# "رئیس" / "رییس", "خانۀ" / "خانه". Search reads them bare; the shown text keeps them.
_HAMZA_BARE = str.maketrans(
    {
        "\u0623": "\u0627",  # ALEF WITH HAMZA ABOVE -> ALEF
        "\u0625": "\u0627",  # ALEF WITH HAMZA BELOW -> ALEF
        "\u0671": "\u0627",  # ALEF WASLA -> ALEF
        "\u0624": "\u0648",  # WAW WITH HAMZA ABOVE -> WAW
        "\u0626": "\u06cc",  # YEH WITH HAMZA ABOVE -> FARSI YEH
        "\u06c0": "\u0647",  # HEH WITH YEH ABOVE -> HEH
    }
)
_PERSIAN_WORD = re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]+")


def search_form(text: str) -> str:
    """`text` with non-joiners read as spaces and Persian affixes detached."""
    return _PERSIAN_WORD.sub(_detached, text.replace(ZWNJ, " ").translate(_HAMZA_BARE))


def _detached(match: re.Match[str]) -> str:
    word = match.group()
    prefix = next((p for p in _PREFIXES if word.startswith(p)), "")
    if prefix and len(word) - len(prefix) >= _MIN_STEM:
        word = word[len(prefix) :]
    else:
        prefix = ""
    suffix = next((s for s in _SUFFIXES if word.endswith(s)), "")
    if suffix and len(word) - len(suffix) >= _MIN_STEM:
        word = word[: -len(suffix)]
    else:
        suffix = ""
    return " ".join(part for part in (prefix, word, suffix) if part)
