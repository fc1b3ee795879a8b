"""A sentence that does not say what it is about ("The default is 0.", "It defaults to 5.")
and the sentence that does: its entry head or the sentence before it. The dependent sentence is
matched and embedded with its subject where that subject is what the question asks about, and
shown after it (docs/architecture.md, the turn's path, step 7)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from apps.answers.composing.candidates import Scored, Sentence
from apps.answers.composing.terms import content_terms

# How far apart an entry's name and the sentence stating its value may stand (here, and in
# sentences.with_stating_follower): a manual's entry says what an option is, then its
# argument, then its default, rarely more than three sentences on.
FOLLOWER_REACH = 3
# A subject is a sentence, not a page's run-in header block ("Using APT Offline ---- Jason
# Gunthorpe ... Copyright ... License Notice ...") that the splitter left whole.
SUBJECT_MAX_WORDS = 60
# A sentence that does not say what it is about: its subject is named before it ("port You
# can override the default port ... (defaults to 873)." then "This is ignored if ...").
_DEPENDENT = re.compile(
    r"^(?:the\s+default\b|defaults?\b|by\s+default,?\s+(?:it|this)\b|it\b|its\b|this\b"
    r"|these\b|they\b|(?:the\s+)?(?:possible|valid|allowed|accepted)\s+values?\b"
    r"|the\s+(?:value|argument|maximum|minimum)\s+is\b|if\s+(?:set|unset|enabled|disabled)\b"
    r"|setting\s+this\b|مقدار\s+پیش|پیش\u200c?فرض\s|این\s)",
    re.IGNORECASE,
)
# An entry's head names what it is about before its first sentence: "max connections This
# parameter ...", "LogLevel Sets ...", "--suffix=SUFFIX This option ...", "Port Specifies ...".
_ENTRY_NAME = re.compile(
    r"^(?:(?P<words>[a-z][\w.-]*(?:\s+[a-z][\w.-]*){0,2})\s+[A-Z(\"'`]"
    r"|(?P<option>--?\w[\w-]*)|(?P<camel>[A-Z][a-z0-9]+[A-Z]\w*)\s"
    r"|(?P<word>[A-Z]\w+)\s+[A-Z][a-z]+s\s+[a-z])"  # "Retries Sets how many ..."
)
# A sentence ending in a one-letter abbreviation ("... in the U.S.", "e.g.") before one that
# opens in lower case was split where it goes on.
_ABBREVIATION_END = re.compile(r"\b[A-Za-z]\.$")


def subject_of(text: str, before: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
    """The sentence of the same paragraph a dependent sentence is about: the nearest entry
    head ("max connections This parameter ...") within FOLLOWER_REACH sentences, else the
    sentence just before it; None for a sentence that names its own subject."""
    if not before or not _DEPENDENT.match(text):
        return None
    whole = [(p, t) for p, t in _whole_sentences(before) if len(t.split()) <= SUBJECT_MAX_WORDS]
    if not whole:
        return None
    for position, earlier in reversed(whole[-FOLLOWER_REACH:]):
        if entry_name(earlier):
            return position, earlier
    return whole[-1]


def _whole_sentences(sentences: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """The sentences with those split at an abbreviation joined again, each at the position of
    its start: "Mountrail County is a county in the U.S." + "state of North Dakota."."""
    whole: list[tuple[int, str]] = []
    for position, text in sentences:
        if whole and text[:1].islower() and _ABBREVIATION_END.search(whole[-1][1]):
            whole[-1] = (whole[-1][0], f"{whole[-1][1]} {text}")
        else:
            whole.append((position, text))
    return whole


def entry_name(text: str) -> frozenset[str]:
    """The terms of the name an entry head opens with ("max connections This parameter ..."
    -> max, connection); empty for any other sentence."""
    match = _ENTRY_NAME.match(text)
    if match is None:
        return frozenset()
    name = next(g for g in match.groups() if g).split()
    # After the name its argument may follow ("dateformat format_string Specify ..."): a name
    # goes on only in plain words.
    plain = len(name) if all(w.isalpha() for w in name[1:]) else 1
    return content_terms(" ".join(name[:plain]))


def with_lent_terms_where_due(
    candidates: Sequence[Sentence], query_terms: frozenset[str]
) -> list[Sentence]:
    """Each dependent sentence matched with its subject's words where it answers part of the
    question itself. Not where it says nothing asked ("It is equivalent to ..." is no better a
    match than its subject, only longer), nor where the question names an entry of the
    candidates and the sentence belongs to another: "The default is 30." under ConnectTimeout
    is no answer to a question about Retries just because both entries speak of the same
    client."""
    named = {s.entry for s in candidates if s.entry and s.entry <= query_terms}
    entries = {(s.alias, s.position): s.entry for s in candidates}
    kept = [
        s if not s.lent or _lent_is_due(s, entries, named, query_terms) else _without_lent(s)
        for s in candidates
    ]
    return [
        replace(s, other_entry=True) if _of_another_entry(s, entries, named) else s for s in kept
    ]


def _of_another_entry(
    sentence: Sentence, entries: dict[tuple[str, int], frozenset[str]], named: set[frozenset[str]]
) -> bool:
    entry = entries.get((sentence.alias, sentence.subject))
    return bool(named and entry and entry not in named)


def _lent_is_due(
    sentence: Sentence,
    entries: dict[tuple[str, int], frozenset[str]],
    named: set[frozenset[str]],
    query_terms: frozenset[str],
) -> bool:
    entry = entries.get((sentence.alias, sentence.subject))
    if not entry or not (sentence.terms - sentence.lent) & query_terms:
        return False
    return not named or entry in named


def _without_lent(sentence: Sentence) -> Sentence:
    """Matched and embedded as it stands, without its subject's words."""
    return replace(
        sentence, terms=sentence.terms - sentence.lent, lent=frozenset(), extent=sentence.text
    )


def with_subjects(chosen: Sequence[Scored], scored: Sequence[Scored]) -> tuple[Scored, ...]:
    """The chosen sentences, each dependent one with the sentence naming its subject ("The
    default is INFO." alone does not say what defaults to INFO), in document order."""
    by_place = {(s.sentence.alias, s.sentence.position): s for s in scored}
    kept = {(s.sentence.alias, s.sentence.position): s for s in chosen}
    for s in chosen:
        subject = by_place.get((s.sentence.alias, s.sentence.subject))
        if s.sentence.subject >= 0 and subject is not None:
            kept.setdefault((s.sentence.alias, s.sentence.subject), subject)
    return tuple(sorted(kept.values(), key=lambda s: (s.sentence.rank, s.sentence.position)))


def about_each_other(a: Sentence, b: Sentence) -> bool:
    """One sentence names the other's subject: they say different things by design."""
    return a.alias == b.alias and (a.subject == b.position or b.subject == a.position)
