"""Conversation titles made from the question, without a model: the topic it asks about, in
the question's language, as a phrase a reader recognises in the sidebar and the page header.

Rules over the question's form, not a list of questions: "How do I upload several files at
once?" -> "Uploading several files at once" (the asker's action as a gerund), "What is a
chunk?" -> "What a chunk is", "What is the leave policy?" -> "The leave policy"; in Persian
«چگونه چند فایل را همزمان بارگذاری کنم؟» -> «چگونگی بارگذاری چند فایل همزمان» (the light
verb's noun leads, «چگونگی» keeps "how"). A question these rules do not fit keeps its own
words whole, without the question mark: a title is never the question cut at some word.
"""

from __future__ import annotations

import re

from apps.answers.composing.terms import word_set
from apps.corpus.text import is_greeting, normalise_text, words

TITLE_MAX_CHARS = 200  # Conversation.title's column; a longer question is cut between words

_LEAD = re.compile(
    r"^(?:(?:hi|hello|hey)\b[,!.]?\s*|please[,!]?\s+|سلام[،,!.]?\s*|لطف[اًا]\s+)+", re.I
)
_TAIL = re.compile(r"[\s?؟!.,،;:]*(?:\s+(?:please|thanks|thank you))?[\s?؟!.,،;:]*$", re.I)
_PRONOUN = r"(?:i|we|you|one|users?|they|someone)"
_MODAL = r"(?:do|can|should|could|would|may|might|must|will)"
_HOW_DO = re.compile(rf"^how\s+(?:{_MODAL}\s+{_PRONOUN}|to)\s+([a-z]+)\b(.*)$", re.I)
_CAN_I = re.compile(rf"^(?:can|could|may|should|must)\s+{_PRONOUN}\s+([a-z]+)\b(.*)$", re.I)
_WHAT_IS = re.compile(r"^what(?:'s|\s+(is|are|was|were))\s+(.+)$", re.I)
_ABOUT = re.compile(r"^(?:tell me(?: more)? about|explain|describe|show me)\s+(.+)$", re.I)
_THE = re.compile(r"^(?:the|my|our|your)\s", re.I)
# Verbs of two syllables stressed on the last: the consonant doubles (submit -> submitting).
_DOUBLES = word_set("submit admit commit permit omit forget begin refer prefer occur")
_VOWELS = "aeiou"

_FA_HOW = ("چگونه", "چطور", "چطوری")
_FA_MODAL = word_set("می‌توانم می‌توانیم میتوانم میتوانیم می‌شود میشود باید")
# The light verbs of Persian compound verbs ("بارگذاری کنم"): the word before them is the
# action's noun, which can lead a title ("بارگذاری ...").
_FA_LIGHT = word_set(
    """کنم کنیم کند کنند کنید بکنم بکنیم کرد شود بشود شوم شوند دهم دهیم دهد بدهم
    بدهیم دهند بگیرم بگیریم گیرم گیریم"""
)
_FA_OBJECT = "را"


def title_from_question(question: str) -> str | None:
    """The conversation's title from its question; None for greetings and thanks."""
    if is_greeting(question) and len(words(question)) <= 4:
        return None
    sentence = _TAIL.sub("", _LEAD.sub("", _question_sentence(question))).strip()
    if not words(sentence):
        return None
    persian = any("\u0600" <= c <= "\u06ff" for c in sentence)
    title = _persian_topic(sentence) if persian else _english_topic(sentence)
    return _bounded(_capitalised(title))


def _question_sentence(text: str) -> str:
    """The first sentence that asks (ends in a question mark), else the first one."""
    flat = " ".join(normalise_text(text).split())
    sentences = [s for s in re.split(r"(?<=[?؟.!])\s+", flat) if s.strip()]
    asking = [s for s in sentences if s.rstrip().endswith(("?", "؟"))]
    return (asking or sentences or [flat])[0]


def _english_topic(sentence: str) -> str:
    if found := _HOW_DO.match(sentence) or _CAN_I.match(sentence):
        return gerund(found.group(1)) + found.group(2)
    if found := _WHAT_IS.match(sentence):
        verb, subject = (found.group(1) or "is").lower(), found.group(2)
        return subject if _THE.match(subject) else f"What {subject} {verb}"
    if found := _ABOUT.match(sentence):
        return found.group(1)
    return sentence


def gerund(verb: str) -> str:
    """The -ing form by the spelling rules: use -> using, set -> setting, tie -> tying."""
    base = verb.lower()
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and not base.endswith(("ee", "ye", "oe")) and len(base) > 2:
        return base[:-1] + "ing"
    vowel_groups = len(re.findall(f"[{_VOWELS}]+", base))
    cvc = (
        len(base) >= 3
        and base[-1] not in _VOWELS + "wxy"
        and base[-2] in _VOWELS
        and base[-3] not in _VOWELS
    )
    if cvc and (vowel_groups == 1 or base in _DOUBLES):
        return base + base[-1] + "ing"
    return base + "ing"


def _persian_topic(sentence: str) -> str:
    tokens = sentence.split()
    if not tokens or tokens[0] not in _FA_HOW:
        return sentence
    body = [t for t in tokens[1:] if t not in _FA_MODAL]
    if len(body) < 2 or body[-1] not in _FA_LIGHT:
        return sentence  # a simple verb has no noun to lead with: the question stays whole
    action, rest = body[-2], [t for t in body[:-2] if t != _FA_OBJECT]
    return " ".join(["چگونگی", action, *rest])


def _capitalised(title: str) -> str:
    return title[:1].upper() + title[1:]


def _bounded(title: str) -> str:
    if len(title) <= TITLE_MAX_CHARS:
        return title
    return title[: TITLE_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
