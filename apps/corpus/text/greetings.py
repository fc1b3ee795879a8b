"""Greetings, thanks and goodbyes in English and Persian: the one small-talk lexicon.

The conversational composer picks its fixed reply by kind, conversation titles skip small
talk, and the router builds its small-talk cue from the same words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping

from apps.corpus.text.normalise import normalise_text

# In the order they are tested: "thanks, bye" is thanks, "hi, thanks" is thanks too.
GREETING_KINDS = ("thanks", "farewell", "greeting")

# kind -> (English words, Persian words), "|"-separated, lower-case and normalised.
_LEXICON: Mapping[str, tuple[str, str]] = {
    "greeting": (
        "hi|hello|hey|hiya|greetings|good morning|good afternoon|good evening",
        "سلام|درود|صبح بخیر|عصر بخیر|وقت بخیر",
    ),
    "thanks": (
        "thanks|thank you|thx|cheers|appreciated",
        "ممنون|ممنونم|ممنونیم|مرسی|متشکر|متشکرم|متشکریم|سپاس|سپاسگزارم|سپاسگزاریم|تشکر",
    ),
    "farewell": ("bye|goodbye|see you", "خداحافظ|خدانگهدار|بدرود"),
}


def greeting_pattern(
    *kinds: str, persian_inside_words: bool = False, excluding: Collection[str] = ()
) -> str:
    """Regex source matching a word of the given kinds (all when none) anywhere in a text.

    Words match whole. `persian_inside_words` lets Persian ones match inside longer words
    too, as the router's trained small-talk cue always has ("سلامی", but also "سلامت").
    `excluding` leaves words out, for a trained feature fitted without them.
    """
    chosen = kinds or GREETING_KINDS
    english = _alternation((_LEXICON[kind][0] for kind in chosen), excluding)
    persian = _alternation((_LEXICON[kind][1] for kind in chosen), excluding)
    return rf"\b{english}\b|" + (persian if persian_inside_words else rf"\b{persian}\b")


def _alternation(lists: Iterable[str], excluding: Collection[str]) -> str:
    words = (word for listed in lists for word in listed.split("|") if word not in excluding)
    return f"(?:{'|'.join(re.escape(word) for word in words)})"


@functools.cache
def _kind_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    # Thanks and goodbyes count anywhere ("ok, thanks"); a greeting only opens the message,
    # so "which hello world examples exist?" is a question.
    def anchored(kind: str) -> str:
        return (
            rf"^\W*(?:{greeting_pattern(kind)})" if kind == "greeting" else greeting_pattern(kind)
        )

    return tuple((kind, re.compile(anchored(kind), re.IGNORECASE)) for kind in GREETING_KINDS)


def greeting_kind(text: str) -> str | None:
    """'thanks', 'farewell' or 'greeting' when the text is (or opens with) small talk."""
    normalised = normalise_text(text)
    for kind, pattern in _kind_patterns():
        if pattern.search(normalised):
            return kind
    return None


def is_greeting(text: str) -> bool:
    """A greeting, thanks or goodbye (see `greeting_kind`)."""
    return greeting_kind(text) is not None
