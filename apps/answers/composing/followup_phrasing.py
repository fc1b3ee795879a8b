"""Offline follow-up questions phrased as a person would ask them, from a topic of a passage.

A topic is a section heading ("Creating the admin account", "When start-up fails",
"Supported file types") or a phrase the passage repeats ("sick pay"). Its form decides the
question: a how-to heading becomes "How do I ...?", an action (gerund or imperative) too,
a when/if clause "What happens when ...?", another wh-clause "Can you explain ...?", a
statement ("A document stays in pending") "What if ...?", a noun phrase "What is ...?" /
"What are the ...?", one count noun "What is the ...?" (never a bare "What is chunk?"). Persian:
"... چگونه انجام می‌شود؟" for a procedure, "... چیست؟" otherwise, a heading that already asks
("چگونه ...", "این پلتفرم چه کاری انجام می‌دهد") kept as it is. Headings that only point
elsewhere ("Where to go next", "See also") and a Persian topic in Latin script ask nothing.
"""

from __future__ import annotations

import re

from apps.answers.composing.terms import word_set
from apps.corpus.text import normalise_text

# Verbs whose "-ing" form opens a how-to heading ("Creating ...", "Signing in ...").
VERBS = word_set(
    """open click go select enter fill submit send sign log choose press attach wait upload
    download request ask contact complete check install create add review print email call
    visit type save navigate find make take use set run follow approve apply provide register
    book write read copy update restart turn connect confirm scan keep remove configure ingest
    reconnect manage delete export import deploy change train test handle schedule share search
    filter rotate reset migrate monitor upgrade tune evaluate label route stream cite invite
    cancel resume start stop build back restore debug define replace rename move edit limit
    protect secure enable disable translate store carry pay claim report plan prepare get"""
)
_GERUNDS = {
    form: verb
    for verb in VERBS
    for form in (f"{verb}ing", f"{verb[:-1]}ing", f"{verb}{verb[-1]}ing")
    if not (form == f"{verb[:-1]}ing" and not verb.endswith("e"))
}
_HOW_TO = re.compile(r"^(how|where|when|what|which)\s+to\s+(.+)$", re.IGNORECASE)
_CONDITION = re.compile(r"^(when|if|once|after|before)\s+(.+)$", re.IGNORECASE)
_WH_CLAUSE = re.compile(r"^(how|what|why|where|who|which|whether)\s+.+$", re.IGNORECASE)
# An imperative reads as one only before an object or particle ("Install the client",
# "Sign in"): "Change log" or "Search results" are things, not actions.
_AFTER_IMPERATIVE = word_set(
    "the a an your my all each every several new in up out on off into to down from"
)
_PREPOSITIONS = word_set("after for in of with to through from on by versus vs at about without")
_ARTICLE = re.compile(r"^(the|a|an|your|our|my|its|their)\s", re.IGNORECASE)
_FA_ASKS = ("چگونه", "چطور", "چرا", "کجا", "چه ", "کدام", "آیا")
_FA_ASKING_WORDS = frozenset(["چگونه", "چطور", "چرا", "کجا", "چه", "کدام", "آیا", "چیست", "کیست"])
# A finite verb makes a heading a statement ("A document has the failed status").
_FINITE = word_set(
    """is are was were has have had does do did can cannot will would should stays stay gets
    looks seems fails fail becomes keeps shows appears takes needs"""
)
_RELATIVE = frozenset(["that", "which", "who", "whose"])  # "Files that fail" is a thing
# Words that make a heading a mass noun or a field ("configuration", "analytics").
_MASS_ENDINGS = ("ics", "ion", "ment", "ity", "ness", "ance", "ence", "ing", "ware", "age")
_NAVIGATION = re.compile(
    r"^(where to go next|next steps?|see also|related pages|further reading|overview|"
    r"introduction|summary|contents|examples?|in this (page|section))$",
    re.IGNORECASE,
)
_LATIN = re.compile(r"[A-Za-z]")
_FA_PROCEDURE_CUES = ("نحوه", "روش", "مراحل", "راهنمای", "راه‌های")


def question_from_topic(
    topic: str, *, language: str, procedure: bool, context: str, heading: bool = True
) -> str:
    """The question a reader would ask about `topic`; `context` is the passage it came from.
    A heading names one thing ("What is the travel policy?"), a repeated phrase a kind of
    thing ("What is sick pay?")."""
    # "The bump threshold: tier + 1 ..." is about its first part.
    text = normalise_text(topic).split(":")[0].strip(" \t:.-—>#?؟")
    if not text or _NAVIGATION.match(text):
        return ""
    if language == "fa":
        return _persian(text, procedure=procedure)
    return capitalised(_english(text, procedure=procedure, context=context, heading=heading))


def capitalised(question: str) -> str:
    return question[:1].upper() + question[1:] if question else question


def _english(text: str, *, procedure: bool, context: str, heading: bool) -> str:
    if how_to := _HOW_TO.match(text):
        return f"{how_to.group(1).lower()} do I {how_to.group(2)}?"
    if condition := _CONDITION.match(text):
        return f"What happens {condition.group(1).lower()} {condition.group(2)}?"
    if _WH_CLAUSE.match(text):
        return f"Can you explain {_lowered_start(text, context)}?"
    if " " not in text and text.lower() in _GERUNDS:  # "Routing": an activity, not a task
        return f"How does {text.lower()} work?"
    if action := _action(text):
        return f"How do I {action}?"
    phrase = _lowered_start(text, context)
    lowered = [w.lower() for w in phrase.split()]
    if any(w in _FINITE for w in lowered[1:]) and not _RELATIVE & set(lowered):
        return f"What if {phrase}?"
    if procedure:
        return f"What are the steps for {phrase}?"
    if re.search(r"\band\b|,", phrase):
        return f"What should I know about {phrase}?"
    if " " not in phrase and phrase.islower():
        return _one_word(phrase)
    article = "the " if _takes_article(phrase, context, heading=heading) else ""
    if _plural(phrase):
        return f"What are {article}{phrase}?"
    return f"What is {article}{phrase}?" if " " in phrase else f"What is {phrase}?"


def _takes_article(phrase: str, context: str, *, heading: bool) -> bool:
    """A heading names one thing ("the travel policy"), unless it is a name ("Server-Sent
    Events"); a repeated phrase takes "the" only if the passage gives it one ("the sequence
    number", but "sick pay")."""
    if _ARTICLE.match(phrase):
        return False
    if heading and not all(w[:1].isupper() for w in phrase.split()):
        return True
    return re.search(rf"\b(?:the|a|an)\s+{re.escape(phrase)}\b", context, re.IGNORECASE) is not None


def _one_word(word: str) -> str:
    # "What is chunk?" is not English: a count noun takes "the"; a mass noun or a field does
    # not ("What is configuration?").
    if word.endswith(_MASS_ENDINGS):
        return f"What is {word}?"
    return f"What are the {word}?" if _plural(word) else f"What is the {word}?"


def _action(text: str) -> str:
    """ "Creating the admin account" / "Re-ingesting files" / "Install the client" as the
    action a reader wants to take ("create the admin account"), or "" for a thing."""
    first, _, rest = text.partition(" ")
    word = first.lower()
    prefix = "re-" if word.startswith("re-") else ""
    imperative = word in VERBS and rest.split(" ")[0].lower() in _AFTER_IMPERATIVE
    verb = _GERUNDS.get(word.removeprefix(prefix)) or (word if imperative else "")
    if not verb:
        return ""
    return " ".join(filter(None, (prefix + verb if verb != word else verb, rest)))


def _plural(phrase: str) -> bool:
    # The head noun is the last word before the first preposition: "First steps after setup".
    first, *others = phrase.split()
    head = first
    for word in others:
        if word.lower() in _PREPOSITIONS or word.lower() in _RELATIVE:
            break
        head = word
    return head.lower().endswith("s") and not head.lower().endswith(("ss", "us", "is"))


def _lowered_start(text: str, context: str) -> str:
    """The phrase with its first word in lower case, unless it is a name or an acronym (the
    passage only ever writes it capitalised, or it has capitals past its first letter)."""
    first, _, rest = text.partition(" ")
    if first[1:] != first[1:].lower():
        return text
    # Sentence starts say nothing: "Redis runs ..." and "Public holidays are ..." look alike.
    inside = [
        m.group()
        for m in re.finditer(rf"\b{re.escape(first)}\b", context, re.IGNORECASE)
        if context[: m.start()].rstrip()[-1:] not in ("", ".", "!", "?", ":", "\n")
    ]
    if inside and first.lower() not in inside:
        return text
    return " ".join(filter(None, (first.lower(), rest)))


def _persian(text: str, *, procedure: bool) -> str:
    if _LATIN.search(text) and not re.search(r"[\u0600-\u06ff]", text):
        return ""  # "turn چگونه انجام می‌شود؟" mixes scripts; a Persian reader asks in Persian
    if text.startswith(_FA_ASKS) or _FA_ASKING_WORDS & set(text.split()):
        return f"{text}؟"
    if procedure and not text.startswith(_FA_PROCEDURE_CUES):
        return f"{text} چگونه انجام می‌شود؟"
    return f"{text} چیست؟"
