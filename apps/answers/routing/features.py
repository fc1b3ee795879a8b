"""Cheap, dependency-free text features shared by training and inference.

Training hands these exact functions to scikit-learn as analyzers, and inference
calls them again, so the two paths cannot drift apart.
"""

from __future__ import annotations

import re
import unicodedata

from apps.answers.routing.types import Intent
from apps.corpus.text import ZWNJ, detect_language, greeting_pattern, normalise_text

# Features look at the start of the text only: enough to route, and bounded cost.
MAX_FEATURE_CHARS = 1000
CHAR_NGRAM_RANGE = (2, 5)
WORD_NGRAM_RANGE = (1, 2)
FOLLOW_UP_MAX_TOKENS = 7
MAX_STEPS = 4

# Folding the router adds on top of the shared normaliser; it loses distinctions that
# matter for matching passages but not for telling intents apart.
_FEATURE_FOLD = str.maketrans(
    {
        "ۀ": "ه",
        "؟": "?",
        "،": ",",
        "؛": ";",
        # Users write "می‌خواهم", "میخواهم" and "می خواهم": a space makes two of them agree.
        ZWNJ: " ",
        "\u200d": "",
    }
)
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def feature_text(text: str) -> str:
    """The text the router's features read: `normalise_text` of the first
    MAX_FEATURE_CHARS characters in compatibility form (NFKC, so ligatures and
    presentation forms become letters), then case-folded, with Persian punctuation as
    ASCII, ZWNJ as a space and every run of whitespace (line breaks too) one space."""
    text = normalise_text(unicodedata.normalize("NFKC", text[:MAX_FEATURE_CHARS]))
    return _SPACES.sub(" ", text.translate(_FEATURE_FOLD)).strip().casefold()


def word_tokens(normalized: str) -> list[str]:
    return _WORD.findall(normalized)


def word_ngrams(normalized: str) -> list[str]:
    tokens = word_tokens(normalized)
    low, high = WORD_NGRAM_RANGE
    return [
        " ".join(tokens[start : start + n])
        for n in range(low, high + 1)
        for start in range(len(tokens) - n + 1)
    ]


def char_ngrams(normalized: str) -> list[str]:
    """Character n-grams inside space-padded words, like scikit-learn's `char_wb`."""
    low, high = CHAR_NGRAM_RANGE
    grams: list[str] = []
    for word in normalized.split():
        padded = f" {word} "
        for n in range(low, min(high, len(padded)) + 1):
            grams.extend(padded[start : start + n] for start in range(len(padded) - n + 1))
    return grams


_WH_WORDS = frozenset(
    [
        "what",
        "whats",
        "what's",
        "who",
        "whos",
        "who's",
        "when",
        "where",
        "where's",
        "which",
        "why",
        "how",
        "is",
        "are",
        "can",
        "do",
        "does",
        "چه",
        "چی",
        "چیه",
        "چرا",
        "کی",
        "کجا",
        "کجاست",
        "کدام",
        "کدوم",
        "چند",
        "چقدر",
        "چطور",
        "چطوری",
        "چگونه",
        "آیا",
    ]
)
# Small cue lexicons: general phrasing of each intent, not topics of the labelled set.
_HOW_TO = re.compile(
    r"\bhow (?:do|can|to|should|would)\b|\bsteps?\b|\bprocedure\b|\bprocess\b|\binstructions?\b"
    r"|\bwalk me through\b|\bset(?:ting)? ?up\b|\binstall|\bconfigur|\bguide to\b|\bbest way\b"
    r"|\bway to\b|چطور|چگونه|مراحل|نحوه|روال|چه کار|نصب|راه اندازی|فعال سازی|بهترین راه"
)
_FACT_QUESTION = re.compile(
    r"\bhow (?:many|much|long|often|old)\b|\bwho\b|\bwhen\b|\bwhat (?:is|are|was|were|does)\b"
    r"|\b(?:is|are|does|do|can) (?:the|our|we|i|it|there)\b|\bexplain\b|\btell me about\b"
    r"|\bsummar|چقدر|چند|کیه|\bکی\b|چیه|چیست|آیا|توضیح|خلاصه"
)
_COMPARE = re.compile(
    r"\bvs\b|\bversus\b|\bdiffer|\bcompar|\bcontrast|\bpros and cons\b|\bdistinguish|\brank\b"
    r"|تفاوت|فرق|مقایسه|در مقابل|در برابر|مزایا و معایب"
)
_COMPARATIVE = re.compile(
    r"\bthan\b|\b(?:better|worse|best|cheaper|faster|stricter|safer|bigger|smaller|more|less)\b"
    r"|(?:\s|^)تر(?:ه|ین)?\b|\S{2,}تره\b|بیشتر|کمتر|بهتر"
)
_ALTERNATIVE = re.compile(r"\bor\b|(?:\s|^)یا\s")
_DOCUMENT_NOUN = re.compile(
    r"\b(?:documents?|docs?|files?|pdfs?|papers?|templates?|reports?|slides|minutes|notes|handbook"
    r"|manual|guidelines|checklist|policies|contracts|articles|whitepapers?|playbook|records|faq)\b"
    r"|سند|اسناد|مستندات|مدارک|فایل|گزارش|قالب|فرم|اسلاید|آیین ?نامه|دستورالعمل|دفترچه|کتابچه"
    r"|مقاله|مقالات|صورتجلسه|بخشنامه|منشور|راهنمای"
)
_SEARCH_VERB = re.compile(
    r"^(?:find|list|show|search|look for|pull up|get me|grab|give me)\b|\bwhere(?:'s| is| are| can i find)\b"
    r"|\b(?:all|any|every|everything|anything|stuff) (?:on|about|related|mentioning|tagged)\b"
    r"|\bwhat do we have\b|لیست|فهرست|پیدا|جستجو|نشون|بیار|هر چی|همه|چی داریم"
)
# Greetings, thanks and goodbyes from the shared lexicon, plus the acknowledgements and
# informal forms that only matter for telling chit-chat from a question. The shipped model
# was fitted and measured with this cue silent on "appreciated", and firing on it moves its
# confidence, so the word stays out of the cue (the conversational reply still knows it).
_SOCIAL = re.compile(
    greeting_pattern(persian_inside_words=True, excluding=("appreciated",))
    + r"|\b(?:yo|thank|ty|ok|okay|cool|nice|great|awesome|perfect|lol|haha\w*|sorry|good night)\b"
    r"|بخیر|باشه|اوکی|ایول|دمت گرم|قربونت|خسته نباشی|ببخشید"
)
_ADDRESSES_ASSISTANT = re.compile(
    r"\b(?:you|your|you're|yourself|u|bot|assistant|chatgpt)\b"
    r"|(?:^|\s)(?:تو|ربات|اسمت|هستی|بلدی|داری|میاری|جوابت)(?:\s|\?|$)|\bمی \S+ی\b"
)
_ENUMERATION = re.compile(r",| and | و |;")

HAND_FEATURE_NAMES: tuple[str, ...] = (
    "starts_with_wh_word",
    "how_to",
    "fact_question",
    "comparison",
    "comparative",
    "alternative",
    "document_noun",
    "search_verb",
    "social",
    "addresses_assistant",
    "question_mark",
    "statement",
    "length",
    "very_short",
    "enumeration",
    "follow_up_fragment",
)


def hand_features(normalized: str) -> tuple[float, ...]:
    tokens = word_tokens(normalized)
    starts_wh = bool(tokens) and tokens[0] in _WH_WORDS
    cues = (_HOW_TO, _FACT_QUESTION, _COMPARE, _COMPARATIVE, _ALTERNATIVE, _DOCUMENT_NOUN)
    social = (_SEARCH_VERB, _SOCIAL, _ADDRESSES_ASSISTANT)
    return (
        float(starts_wh),
        *(float(pattern.search(normalized) is not None) for pattern in cues + social),
        float("?" in normalized),
        float(not starts_wh and "?" not in normalized),
        min(len(tokens), 24) / 24,
        float(len(tokens) <= 2),
        min(len(_ENUMERATION.findall(normalized)), 4) / 4,
        float(is_follow_up_fragment(normalized)),
    )


def asks_something(normalized: str) -> bool:
    """A question mark, a question word first, or a how-to or fact-question cue."""
    tokens = word_tokens(normalized)
    if "?" in normalized or (tokens and tokens[0] in _WH_WORDS):
        return True
    return any(cue.search(normalized) for cue in (_HOW_TO, _FACT_QUESTION))


def names_documents(normalized: str) -> bool:
    """A document noun other than "file", which is as often what a technical question is
    about ("which file ...", "where's logrotate's state file?")."""
    nouns = (m.group(0) for m in _DOCUMENT_NOUN.finditer(normalized))
    return any(_FILE_NOUN.fullmatch(noun) is None for noun in nouns)


def wants_documents(normalized: str) -> bool:
    """Documents named and asked for: "pull up the security policy", "Q3 financial report"
    (a search cue, or no question at all), not "which manual page documents rsync?"."""
    if not names_documents(normalized):
        return False
    return _SEARCH_VERB.search(normalized) is not None or not asks_something(normalized)


_FILE_NOUN = re.compile(r"files?|فایل")


def is_social(normalized: str) -> bool:
    """A greeting, thanks or chit-chat, or words to the assistant itself."""
    return any(cue.search(normalized) for cue in (_SOCIAL, _ADDRESSES_ASSISTANT))


_FOLLOW_UP_START = re.compile(
    r"^(?:and|also|or|but|then|so|ok and|what about|how about|same for|what if|no,? i meant?"
    r"|i meant?|the (?:first|second|third|last|other) one|that one|for|on|in"
    r"|و|یا|ولی|اما|پس|خب|اگه|اگر|در مورد|درباره|برای|روی|اون|همین|نه,? منظورم|منظورم)"
    # A space or comma must follow: "on-call pay" does not start with "on".
    r"(?=[\s,?])",
)


def is_follow_up_fragment(text: str) -> bool:
    """A short message that leans on the previous turn ("and for contractors?")."""
    normalized = feature_text(text)
    tokens = word_tokens(normalized)
    if not 2 <= len(tokens) <= FOLLOW_UP_MAX_TOKENS:
        return False
    return _FOLLOW_UP_START.match(normalized) is not None


# --- decomposition -------------------------------------------------------------------------

_EN_COMPARE_FORMS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^(?:which|what)(?:'s| is)?\s+(?:better|faster|cheaper|safer|recommended)\b[^,:]*[,:]\s*(?P<list>.+)$",
        r"^(?:what(?:'s| is| are) the )?(?:differences?|differnce) (?:between|of) (?P<list>.+)$",
        r"^(?:compare|contrast|comparing)\s+(?:the\s+)?(?P<list>.+)$",
        r"^how (?:does|do|is|are) (?P<a>.+?) (?:differ|different|compare)\w* (?:from|to|with) (?P<b>.+)$",
        r"^what distinguishes (?P<a>.+?) from (?P<b>.+)$",
        r"^(?P<list>.+?\s(?:vs\.?|versus)\s.+)$",
    )
)
_EN_TAIL = re.compile(
    r"\s*(?:,|\s-|\s–)\s*which\b.*$|\s+and (?:then |also )?(?:tell|explain|which|what|how|flag)\b.*$",
    re.IGNORECASE,
)
_EN_ASPECT = re.compile(r"\s+(?:on|in terms of|regarding)\s+(?P<aspect>[^,]+(?:,[^,]+)*)$")
_EN_SIDE_SEPARATOR = re.compile(
    r"\s+(?:vs\.?|versus)\s+|\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|with|to)\s+", re.IGNORECASE
)
_FA_TAIL = re.compile(r"\s+و\s+(?:بعد\s+|همچنین\s+)?(?:بگو|توضیح|همچنین|کدوم|کدام)\b.*$")
_FA_VERB = re.compile(
    r"\s*(?:(?:را|رو)\s+)?(?:با هم\s+)?(?:مقایسه کن(?:ید)?|چه (?:فرقی|تفاوتی)(?: با هم)?"
    r" (?:داره|دارن|دارند|دارد)|چیه|چیست)$"
)
_FA_LEAD = re.compile(r"^(?:(?:تفاوت|فرق|مقایسه)(?:\s+بین)?\s+|(?:کدام|کدوم)[^،,:]*[،,:]\s*)")
_FA_ASPECT = re.compile(r"\s+(?:(?:را|رو)\s+)?از نظر\s+(?P<aspect>.+)$")
_FA_BETTER = re.compile(r"\s+(?:بهتره|بهتر است)(?=\s|$)")
_FA_SIDE_SEPARATOR = re.compile(r"\s*[,،]\s*|\s+(?:و|با|یا)\s+|\s+در (?:مقابل|برابر)\s+")
_FA_OBJECT_MARKER = re.compile(r"\s+(?:را|رو)$")
_EN_NEW_QUESTION = re.compile(
    r"(?:,\s*|\s+)(?:and then|and also|and|also|then)\s+"
    r"(?=(?:what|how|who|when|where|which|why|is|are|can|do|does|did|should|will)\b)"
    r"|,\s*(?=(?:what|how|who|when|where|which|why|is|are|can|do|does|did|should|will)\b)"
    r"|,?\s+and then\s+",
    re.IGNORECASE,
)
_FA_NEW_QUESTION = re.compile(
    r"\s*[,،]?\s*(?:و همچنین|همچنین|و بعد)\s+"
    r"|\s*(?:[,،]|\s+و)\s+(?=(?:چه|چی|چطور|چگونه|کی|کجا|چرا|آیا|کدام|کدوم|چند|تا کی)(?:\s|$))"
)
# Sub-questions split after a question mark only: "What is X. Y?" is one question.
_QUESTION_END = re.compile(r"(?<=[?؟])\s+(?=\S)")


def decompose_query(text: str, intent: Intent) -> tuple[str, ...]:
    """Sub-questions for retrieval: one per side of a comparison, one per part of a
    multi-part question; empty when the query is a single question."""
    text = _SPACES.sub(" ", text[:MAX_FEATURE_CHARS]).strip()
    if intent is Intent.CONVERSATIONAL or not text:
        return ()
    if intent is Intent.COMPARISON:
        steps = comparison_steps(text)
        if steps:
            return steps
    return multi_part_steps(text)


def comparison_steps(text: str) -> tuple[str, ...]:
    """One sub-question per compared side, or () when the sides cannot be found."""
    core = text.rstrip(" ?؟.!")
    if detect_language(text) == "fa":
        return _persian_comparison_steps(core)
    core = _EN_TAIL.sub("", core)
    for form in _EN_COMPARE_FORMS:
        match = form.match(core)
        if match is None:
            continue
        groups = match.groupdict()
        listed = groups.get("list") or f"{groups['a']} and {groups['b']}"
        aspect_match = _EN_ASPECT.search(listed)
        aspect = aspect_match.group("aspect") if aspect_match else None
        if aspect_match:
            listed = listed[: aspect_match.start()]
        sides = _split_sides(_EN_SIDE_SEPARATOR, listed)
        if aspect:
            return tuple(f"What is the {aspect} of {side}?" for side in sides)
        return tuple(f"What is {side}?" for side in sides)
    return ()


def _persian_comparison_steps(core: str) -> tuple[str, ...]:
    core = _FA_VERB.sub("", _FA_TAIL.sub("", core))
    core = _FA_BETTER.sub("", _FA_LEAD.sub("", core))
    aspect_match = _FA_ASPECT.search(core)
    if aspect_match:
        core = core[: aspect_match.start()]
    sides = tuple(
        _FA_OBJECT_MARKER.sub("", side) for side in _split_sides(_FA_SIDE_SEPARATOR, core)
    )
    if aspect_match:
        aspect = aspect_match.group("aspect")
        return tuple(f"{side} از نظر {aspect} چگونه است؟" for side in sides)
    return tuple(f"{side} چیست؟" for side in sides)


def _split_sides(separator: re.Pattern[str], core: str) -> tuple[str, ...]:
    sides = [side.strip(" :,،") for side in separator.split(core)]
    sides = [side for side in sides if side]
    return tuple(sides[:MAX_STEPS]) if len(sides) >= 2 else ()


def multi_part_steps(text: str) -> tuple[str, ...]:
    persian = detect_language(text) == "fa"
    pattern = _FA_NEW_QUESTION if persian else _EN_NEW_QUESTION
    parts = [
        part.strip(" ,،")
        for sentence in _QUESTION_END.split(text)
        for part in pattern.split(sentence)
    ]
    parts = [part for part in parts if len(word_tokens(part)) >= 2]
    return tuple(parts[:MAX_STEPS]) if len(parts) >= 2 else ()
