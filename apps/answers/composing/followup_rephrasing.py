"""Follow-up questions made from the question itself: the parts an answer left unanswered,
and, after a refusal, the question turned toward the documents that came closest.

After a refusal nothing the documents say is known to bear on the question, so a suggestion
built from some passage's heading would change the subject (and often to a passage that only
ranked because it ranks for everything). What helps is asking the same thing of a named
source: "What does the Travel handbook say about the per diem for contractors?". Its topic is
the question's own phrase, never another turn's words.

A title in the other script is wrapped in first-strong isolates (U+2068 ... U+2069), so an
English title inside a Persian sentence (or the reverse) keeps its own direction without
dragging the sentence's punctuation along with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.composing.followup_phrasing import VERBS, capitalised
from apps.answers.composing.terms import content_terms, word_set
from apps.corpus.search.legs import ChunkRow
from apps.corpus.text import detect_language, normalise_text, words

FSI, PDI = "\u2068", "\u2069"
_HOW = re.compile(
    r"^how\s+(?:do|can|should|would|could|must|may|to)\s+(?:(?:i|we|you|one|they|users?)\s+)?(.+)$",
    re.IGNORECASE,
)
_WHAT_IS = re.compile(r"^(?:what|who|which)(?:'s|\s+(?:is|are|was|were))\s+(.+)$", re.IGNORECASE)
_MEANS = re.compile(r"^what\s+(?:does|do)\s+(.+?)\s+mean$", re.IGNORECASE)
_ABOUT = re.compile(
    r"^(?:(?:please\s+)?(?:tell me|explain|describe|show me)(?:\s+about)?|what about|how about)\s+(.+)$",
    re.IGNORECASE,
)
_DETERMINERS = word_set("the a an my our your their its this that these those")
_WH = "how|what|why|when|where|which|who|whether|can|could|does|do|is|are|should|will"
# "..., and how do I ...": a second question, not a second thing asked about ("A and B").
_EN_JOINS = re.compile(
    rf"\?\s+|;\s*|,?\s+(?:and|also|then)\s+(?=(?:{_WH}|{'|'.join(sorted(VERBS))})\b)",
    re.IGNORECASE,
)
_FA_ASKING = ("چگونه", "چطور", "چرا", "کجا", "چه", "کدام", "آیا", "چیست", "کی", "چند", "چقدر")
# A Persian question ends in its verb or copula ("... چقدر است؟", "... را نصب کنم؟").
_FA_VERB_TAIL = word_set(
    """است هست هستند نیست بود دارم دارد داریم دارند داری کنم کنیم کنند کنید کند کرد شود
    شوم شوند چیست چیه کیست کجاست می‌شود می‌کند می‌توان می‌توانم باید"""
)


def isolated(text: str, *, language: str) -> str:
    """`text` wrapped in first-strong isolates when its script is not the sentence's."""
    return f"{FSI}{text}{PDI}" if detect_language(text) != language else text


def question_topic(question: str, *, language: str) -> str:
    """What the question asks about, as a phrase ("the per diem for contractors", "how to
    reset my password"); "" when it names nothing."""
    text = normalise_text(question).strip().rstrip("?؟!. ").strip()
    if language == "fa":
        return _persian_topic(text)
    for pattern, form in ((_HOW, "how to {}"), (_MEANS, "{}"), (_WHAT_IS, "{}"), (_ABOUT, "{}")):
        if found := pattern.match(text):
            return _lowered(form.format(found.group(1)))
    return _lowered(_content_span(text.split(), fa=False))


def _persian_topic(text: str) -> str:
    tokens = [t for t in text.split() if t != "آیا"]
    while tokens and (tokens[-1] in _FA_VERB_TAIL or tokens[-1].startswith(("می‌", "نمی‌"))):
        tokens.pop()
    return _content_span(tokens, fa=True)


def _content_span(tokens: Sequence[str], *, fa: bool) -> str:
    """From the first word that carries content (with its article) to the last."""
    marks = [i for i, token in enumerate(tokens) if content_terms(token)]
    if not marks:
        return ""
    start, end = marks[0], marks[-1]
    if not fa and start > 0 and tokens[start - 1].lower() in _DETERMINERS:
        start -= 1
    return " ".join(tokens[start : end + 1])


def _lowered(phrase: str) -> str:
    first, _, rest = phrase.partition(" ")
    if first[1:] != first[1:].lower() or first == "I":  # a name or an acronym keeps its case
        return phrase
    return " ".join(filter(None, (first.lower(), rest)))


def rephrasings(*, query: str, closest: Sequence[ChunkRow], language: str) -> list[str]:
    """The question asked of each of the closest sources in turn: its document by title, a
    second passage of one document by its section."""
    topic = question_topic(query, language=language)
    if not topic:
        return []
    questions: list[str] = []
    seen: set[int] = set()
    for chunk in closest:
        source = _source_name(chunk, again=chunk.document_id in seen, language=language)
        seen.add(chunk.document_id)
        if source:
            question = _asked_of(source, topic, language=language)
            if question not in questions:
                questions.append(question)
    return questions


def _source_name(chunk: ChunkRow, *, again: bool, language: str) -> str:
    section = chunk.heading.split(">")[-1].strip()
    if not again:
        return isolated(chunk.display_title.strip(), language=language)
    if not section or section == chunk.display_title.strip():
        return ""
    named = isolated(section, language=language)
    return f"بخش «{named}»" if language == "fa" else f"the “{named}” section"


def _asked_of(source: str, topic: str, *, language: str) -> str:
    if language == "fa":
        named = source if source.startswith("بخش ") else f"«{source}»"
        return f"{named} درباره‌ی {topic} چه می‌گوید؟"
    return capitalised(f"What does {source} say about {topic}?")


def unanswered_questions(*, query: str, answer_text: str, language: str) -> list[str]:
    """The parts of a question of several parts ("How do I install the client and configure
    the proxy?") that the answer does not touch, each asked on its own."""
    parts = _parts(normalise_text(query).strip(), language=language)
    if len(parts) < 2:
        return []
    answered = content_terms(answer_text)
    shared = _shared_terms(parts)
    left = [p for p in parts if not (content_terms(p) - shared) & answered]
    if len(left) == len(parts):
        return []  # an answer that touches no part says nothing of which part it missed
    lead = _lead(parts[0]) if language != "fa" else ""
    return [_asked(part, lead=lead, language=language) for part in left if part != parts[0]]


def _parts(question: str, *, language: str) -> list[str]:
    text = question.rstrip("?؟ ")
    if language == "fa":
        pieces = re.split(r"؟\s*|؛\s*|\s+و\s+", text)
        # Only where each side asks something: "پایتون و جاوا چه فرقی دارند" is one question.
        if not all(any(w in _FA_ASKING for w in piece.split()) for piece in pieces):
            pieces = re.split(r"؟\s*|؛\s*", text)
    else:
        pieces = _EN_JOINS.split(text)
    return [p.strip(" ,") for p in pieces if content_terms(p)]


def _shared_terms(parts: Sequence[str]) -> frozenset[str]:
    counts: dict[str, int] = {}
    for part in parts:
        for term in content_terms(part):
            counts[term] = counts.get(term, 0) + 1
    return frozenset(t for t, n in counts.items() if n > 1)


def _lead(first: str) -> str:
    """The asking words of the first part, up to its verb ("How do I" of "How do I install")."""
    tokens = words(first)
    for index, token in enumerate(tokens):
        if token.lower() in VERBS and index > 0:
            return " ".join(tokens[:index])
    return ""


def _asked(part: str, *, lead: str, language: str) -> str:
    if language == "fa":
        return f"{part}؟"
    starts_asking = re.match(rf"^(?:{_WH})\b", part, re.IGNORECASE)
    if lead and not starts_asking and part.split()[0].lower() in VERBS:
        return capitalised(f"{lead} {part}?")
    return capitalised(f"{part}?")
