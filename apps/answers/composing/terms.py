"""Content terms of a query or sentence, and how much of a query a sentence covers.

Light on purpose: lower-cased words minus stopwords with a few plural/tense suffixes cut,
enough to match "requests"/"request" and "کتاب‌ها"/"کتاب" without a language model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from apps.corpus.text import ZWNJ, normalise_text, words


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = word_set(
    """the and for are was were what which who whom whose when where why how does did doing
    done can could should would will shall may might must has have had having with without
    from into onto that this these those there their them they then than about any all some
    our your you its his her she him not but yet also only just very more most such per via
    between difference differences compare comparison versus tell please need want know
    get does something anything thing things way ways one
    این آن‌ها آنها برای است هست نیست های هایی کجا کجاست چیست چیه چطور چگونه چرا کدام
    کدوم آیا باید شود کند کرد کنم کنیم کنید دارد دارند داشت بود بودن هستند شده تفاوت فرق
    مقایسه بین میان درباره مورد روی توی همه اگر وقتی چند چقدر چندم کسی چیزی اینکه ایشان
    خود خودش چه‌کار چگونگی"""
)
_WORD_PARTS = re.compile(f"[{ZWNJ}'’-]")
# A command's one-letter option ("-P", "-a"): the one word that names what is asked in "what is
# -P in rsync?", too short to be a term otherwise. Its case is kept: -P and -p are two options.
_SHORT_OPTION = re.compile(r"(?<![\w-])-[A-Za-z](?![\w-])")
_EN_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))
_FA_SUFFIXES = ("هایی", "های", "ها")


def content_terms(text: str) -> frozenset[str]:
    """Lower-cased, lightly stemmed words longer than two letters, stopwords removed, and
    one-letter options as written."""
    terms: set[str] = set(_SHORT_OPTION.findall(text))
    for word in words(normalise_text(text).lower()):
        for part in _WORD_PARTS.split(word):
            if len(part) > 2 and part not in _STOPWORDS:
                terms.add(_stem(part))
    return frozenset(terms)


def _stem(word: str) -> str:
    # Just enough to match "requests"/"requested"/"request" and "کتاب‌ها"/"کتابها"/"کتاب".
    if word.isascii():
        for suffix, replacement in _EN_SUFFIXES:
            if (
                word.endswith(suffix)
                and not word.endswith(("ss", "us"))  # "status", "bonus" are not plurals
                and len(word) - len(suffix) >= 3
            ):
                word = word[: -len(suffix)] + replacement
                break
        return word[:-1] if len(word) > 4 and word.endswith("e") else word
    for suffix in _FA_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def term_weights(
    query_terms: Iterable[str], sentence_terms: Sequence[frozenset[str]]
) -> dict[str, float]:
    """IDF over the candidate sentences: a term found in every sentence tells them apart least."""
    total = len(sentence_terms)
    return {
        term: math.log(1.0 + (total + 1) / (1 + sum(term in s for s in sentence_terms)))
        for term in query_terms
    }


def weighted_overlap(terms: frozenset[str], weights: dict[str, float]) -> float:
    whole = sum(weights.values())
    return sum(w for t, w in weights.items() if t in terms) / whole if whole else 0.0
