"""Candidate sentences of the context window, and choosing the best non-redundant ones."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from apps.answers.composing.structure import CODE, PROSE, STEP, Line, chunk_lines, never_answers
from apps.answers.composing.terms import content_terms, word_set
from apps.answers.retrieval.types import ContextWindow
from apps.answers.streaming import escape_markers
from apps.corpus.text import split_sentences, words

Vector = npt.NDArray[np.float32]

RELATIVE_FLOOR = 0.6  # a further sentence must score at least this share of the best one
# How far after the best sentence the one that states what was asked may stand (see
# `with_stating_follower`): a manual's entry says what an option is, then its argument, then
# its default, rarely more than three sentences on.
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


@dataclass(frozen=True)
class Sentence:
    text: str
    alias: str
    rank: int  # the chunk's position in the context window, 0 = best
    position: int  # the sentence's position in its chunk
    terms: frozenset[str]
    step: bool  # reads like a step of a procedure
    kind: str = PROSE  # the source line it came from: PROSE, ITEM, STEP, ROW or CODE (structure.py)
    line: int = 0  # that line's position in its chunk
    intro: bool = False  # announces the list or table that follows it
    extent: str = ""  # what is matched and embedded: the text, with what it announces or heads
    heading_terms: frozenset[str] = frozenset()  # of its chunk's title and heading path
    section: str = ""  # that title and heading path as written
    language: str = ""  # its chunk's
    quoted: str = ""  # its line's own form, quoted as is: code's lines, a row under its header
    # A dependent sentence ("The default is 0.") names its subject in an earlier sentence of
    # its paragraph: that sentence's position in the chunk (-1: none), matched and shown with it.
    subject: int = -1
    lent: frozenset[str] = frozenset()  # of `terms`, those only its subject has
    entry: frozenset[str] = frozenset()  # an entry head's: the terms of the name it opens with
    # A dependent sentence of another entry than the one the question names: not chosen.
    other_entry: bool = False


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    similarity: float  # rescaled to 0-1; 0 when the sentence was not embedded
    overlap: float
    score: float
    vector: Vector | None


@dataclass(frozen=True)
class Evidence:
    scored: tuple[Scored, ...]
    chosen: tuple[Scored, ...]
    value: float


_BULLET = re.compile(r"^\s*(?:[-*•·▪]\s+)")


_LIST_NUMBER = re.compile(r"^\(?\d{1,2}[.)](?:\s+|$)")
_STEP_CUE = re.compile(
    r"^(?:step\s+\d|first(?:ly)?\b|second(?:ly)?\b|third(?:ly)?\b|then\b|next\b|after\s+that\b"
    r"|afterwards\b|finally\b|lastly\b|ابتدا|سپس|بعد\s+از\s+آن|در\s+نهایت|در\s+پایان|مرحله|گام|نخست)",
    re.IGNORECASE,
)
_IMPERATIVES = word_set(
    """open click go select enter fill submit send sign log choose press attach wait upload
    download request ask contact complete check install create add review print email call
    visit type save navigate find make take use set run follow approve apply provide register
    book write read copy update restart turn connect confirm scan keep remove"""
)
_FA_IMPERATIVE_VERBS = word_set("کنید شوید نمایید دهید کنند")


def sentence_candidates(context: ContextWindow, *, max_chunks: int = 6) -> list[Sentence]:
    found: list[Sentence] = []
    for rank, chunk in enumerate(context.chunks[:max_chunks]):
        source = chunk.chunk
        section = f"{source.title} > {source.heading}"
        heading_tail = section.rsplit(">", 1)[-1].strip()
        heading_terms = content_terms(section)
        position = 0
        for number, line in enumerate(chunk_lines(chunk.text)):
            heads: list[tuple[int, str]] = []  # this line's sentences so far: (position, text)
            for text, step in _line_sentences(line):
                shortest = 1 if line.kind != PROSE else (2 if step else 3)
                code = line.kind == CODE  # a "# comment" or a "?" pattern is code, not a question
                if (never_answers(text) and not code) or len(words(text)) < shortest:
                    continue
                intro = line.intro and text.endswith(":")
                extent = text
                subject = _subject(text, heads) if line.kind == PROSE else None
                if intro or line.kind != PROSE:
                    # An item alone is often a fragment ("PDF files (.pdf)"): its section and
                    # what it belongs to say what it answers.
                    extent = f"{text} {line.context} {heading_tail}"
                elif subject is not None:
                    extent = f"{subject[1]} {text}"
                heads.append((position, text))
                terms = content_terms(extent)
                found.append(
                    Sentence(
                        text, chunk.alias, rank, position, terms, step,
                        kind=line.kind, line=number, intro=intro, extent=extent.strip(),
                        heading_terms=heading_terms, section=section,
                        language=source.language, quoted=escape_markers(line.quoted),
                        subject=subject[0] if subject is not None else -1,
                        lent=terms - content_terms(text) if subject is not None else frozenset(),
                        entry=entry_name(text),
                    )
                )  # fmt: skip
                position += 1
    return found


def _subject(text: str, before: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
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


def _about_each_other(a: Sentence, b: Sentence) -> bool:
    """One sentence names the other's subject: they say different things by design."""
    return a.alias == b.alias and (a.subject == b.position or b.subject == a.position)


def embedded_text(sentence: Sentence) -> str:
    """What is embedded for a sentence; the vectors stored ahead of questions are of this text."""
    return sentence.extent or sentence.text


def embedded_texts(sentence: Sentence) -> tuple[str, ...]:
    """Every text a sentence may be embedded as: a dependent one alone, too, for questions its
    subject says nothing to (`with_lent_terms_where_due`)."""
    text = embedded_text(sentence)
    return (text, sentence.text) if sentence.lent and text != sentence.text else (text,)


def _line_sentences(line: Line) -> list[tuple[str, bool]]:
    """A list item, step, row or code block is one unit, kept whole; prose is cut into
    sentences."""
    if line.kind == CODE:  # as written: no sentence cut, no pointer dropped, lines kept
        return [(escape_markers(line.text), False)]
    if line.kind != PROSE:
        # Kept whole, without a closing pointer ("... --wait. See 07-ingesting-documents.").
        kept = [p for p in split_sentences(line.text) if not never_answers(p)] or [line.text]
        # A marker in a document's own text is quoted escaped, never taken for a citation.
        text = escape_markers(" ".join(kept)).strip()
        return [(text, line.kind == STEP or _reads_like_step(text))]
    pieces: list[tuple[str, bool]] = []
    numbered = False  # split_sentences cuts "1. Open it." after "1.": carry the cue over
    for raw in split_sentences(line.text):
        # A marker in a document's own text is quoted escaped, never taken for a citation.
        text = _BULLET.sub("", escape_markers(raw)).strip()
        step = numbered or bool(_LIST_NUMBER.match(text)) or _reads_like_step(text)
        numbered = bool(re.fullmatch(r"\(?\d{1,2}[.)]", text))
        pieces.append((_LIST_NUMBER.sub("", text), step))
    return _label_merged(pieces)


_LABEL_WORD = re.compile(r"^[(\[]?[A-Z0-9]")


def _label_merged(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """A label sentence ("SSE (Server-Sent Events). A way of ...": a glossary entry, a bold
    lead-in) is joined to the sentence after it, "SSE (Server-Sent Events): A way of ...":
    the label alone answers nothing, and the sentence after it does not say what it is about."""
    merged: list[tuple[str, bool]] = []
    label = ""
    for text, step in pieces:
        if label:
            merged.append((f"{label}: {text}", step))
            label = ""
        elif _is_label(text):
            label = text.rstrip(".:")
        else:
            merged.append((text, step))
    return [*merged, (label, False)] if label else merged


def _is_label(text: str) -> bool:
    label = text.split()
    return (
        len(label) <= 5
        and all(_LABEL_WORD.match(word) for word in label)
        and not never_answers(text)
    )


def _reads_like_step(text: str) -> bool:
    tokens = words(text.lower())
    if not tokens:
        return False
    if _STEP_CUE.match(text) or tokens[0] in _IMPERATIVES:
        return True
    # Persian instructions end in a plural imperative: "... را پر کنید", "وارد شوید", "بفرستید".
    last = tokens[-1]
    return last in _FA_IMPERATIVE_VERBS or (last.startswith("ب") and last.endswith("ید"))


def cosines(query: Vector, matrix: Vector) -> Vector:
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(query)) or 1.0)
    return (matrix @ query) / np.maximum(norms, 1e-12)


def redundant(candidate: Scored, chosen: Iterable[Scored], *, max_cosine: float = 0.95) -> bool:
    """Too close to a chosen sentence: most terms shared, or nearly the same vector."""
    terms = candidate.sentence.terms
    for other in chosen:
        if _about_each_other(candidate.sentence, other.sentence):
            continue
        union = terms | other.sentence.terms
        if union and len(terms & other.sentence.terms) / len(union) >= 0.6:
            return True
        if _cosine(candidate.vector, other.vector) >= max_cosine:
            return True
    return False


def _cosine(a: Vector | None, b: Vector | None) -> float:
    if a is None or b is None:
        return 0.0
    return float(cosines(a, b[None, :])[0])


def pick(scored: Sequence[Scored], *, max_sentences: int, max_chars: int) -> tuple[Scored, ...]:
    """The best non-redundant sentences within the length budget, in document order."""
    ranked = sorted(scored, key=lambda s: -s.score)
    chosen: list[Scored] = []
    used = 0
    for candidate in ranked:
        if len(chosen) == max_sentences or candidate.score < RELATIVE_FLOOR * ranked[0].score:
            break
        too_long = used + len(candidate.sentence.text) > max_chars
        if (too_long and chosen) or redundant(candidate, chosen):
            continue
        chosen.append(candidate)
        used += len(candidate.sentence.text) + 1
    return tuple(sorted(chosen, key=lambda s: (s.sentence.rank, s.sentence.position)))


# Where a manual's next entry begins: a sentence led by the name it describes, not a word of
# prose ("notifempty Do not rotate ...", "NumberOfPasswordPrompts Specifies ...",
# "-d, --debug Turn on ..."): a lower-case word, an option, or a name with inner capitals.
_ENTRY_HEAD = re.compile(r"^(?:[a-z][\w.-]*\s|--?\w|[A-Z][a-z0-9]+[A-Z]\w*\s)")


def with_stating_follower(
    chosen: Sequence[Scored],
    scored: Sequence[Scored],
    *,
    states: Callable[[str], bool],
    max_sentences: int,
    max_chars: int,
) -> tuple[Scored, ...]:
    """The chosen sentences, and the one after the best that states what was asked when the
    best does not: "NumberOfPasswordPrompts Specifies the number of password prompts before
    giving up." names the option asked about and matches the question best, while "The
    default is 3." two sentences on states the answer and matches nothing but "default". It
    is taken from the same paragraph, within FOLLOWER_REACH sentences, before another entry
    begins; the lowest-scored others make room for it."""
    if not chosen:
        return tuple(chosen)
    best = max(chosen, key=lambda s: s.score)
    if states(best.sentence.text):
        return tuple(chosen)
    follower = _stating_follower(best.sentence, scored, states=states)
    if follower is None or any(s.sentence == follower.sentence for s in chosen):
        return tuple(chosen)
    kept = sorted(chosen, key=lambda s: -s.score)
    while kept and (
        len(kept) >= max_sentences
        or sum(len(s.sentence.text) + 1 for s in kept) + len(follower.sentence.text) > max_chars
    ):
        if len(kept) == 1:
            break  # the best stays, whatever the follower's length
        kept.pop()
    return tuple(sorted([*kept, follower], key=lambda s: (s.sentence.rank, s.sentence.position)))


def _stating_follower(
    anchor: Sentence, scored: Sequence[Scored], *, states: Callable[[str], bool]
) -> Scored | None:
    after = sorted(
        (
            s
            for s in scored
            if s.sentence.alias == anchor.alias
            and s.sentence.line == anchor.line
            and 0 < s.sentence.position - anchor.position <= FOLLOWER_REACH
        ),
        key=lambda s: s.sentence.position,
    )
    for candidate in after:
        if _ENTRY_HEAD.match(candidate.sentence.text):
            return None  # the next entry: what it states is about another name
        if states(candidate.sentence.text):
            return candidate
    return None
