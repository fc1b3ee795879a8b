"""A follow-up question, rewritten into a standalone query before retrieval.

"Which book is it adapted from?" after "Who directed Never Cry Wolf?" searches its own words
and the earlier topic's. Offline, rules decide whether the question leans on the conversation
(a leading "and"/"و", a pronoun or demonstrative pointing back, and no entity of its own) and
carry the salient terms of the earlier questions (capitalised phrases, quoted titles, content
words); retrieval then searches both the question and the combined query and fuses them, so
a wrong guess still keeps the question's own results. The names an earlier answer stated
are carried too, after the questions' terms: "What else did he direct?" after "Who directed
Never Cry Wolf?" is about the director the answer named, not the film. They lead only when
the earlier question asked for a person ("Who directed ...", not "Who is ...") and the
follow-up points back at one ("he", "she"). With a chat model, one short rewrite
call does the same, and the rules serve when it fails. A question with its own entity is left
alone: a new topic is never polluted by the previous one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from apps.answers.providers.chat import ChatModel
from apps.answers.retrieval.expansion import STOP_WORDS, chat_text
from apps.answers.retrieval.types import QueryRewrite
from apps.answers.routing.features import is_follow_up_fragment
from apps.answers.routing.types import HistoryMessage
from apps.corpus.text import ZWNJ, split_sentences, words

MAX_CARRIED_TERMS = 8
MAX_ANSWER_TERMS = 3  # names from earlier answers: fewer than the questions' terms
MAX_TOPIC_QUESTIONS = 3  # how far back a chain of follow-ups is followed to its topic
# A question pointing back ("it", "this", "این") with this many content words of its own has
# its own subject: no follow-up of the multi-turn set has four, and 19 of the 217 standalone
# real-document questions ("how long does sudo remember my password before it asks again?")
# hold such a pointer.
OWN_SUBJECT_MIN_TERMS = 4
# A short message opening with a preposition ("in ...", "برای ...") that asks a question of
# its own with this many content words stands alone: "برای پشتیبان‌گیری کدام ابزار مناسب است؟".
FRAGMENT_OWN_MIN_TERMS = 3

REWRITE_PROMPT = (
    "Rewrite the user's last question so that it can be understood without the conversation: "
    "replace pronouns and fill in what it leaves out from the earlier questions and answers "
    "(a pronoun may point at a person or thing only an answer named). If it already "
    "stands alone, repeat it unchanged. Keep its language. Reply with the question only."
)

_EN_BACK = frozenset(
    ["it", "its", "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs"]
)
_EN_DEMONSTRATIVES = frozenset(["this", "that", "these", "those"])
_FA_BACK = frozenset(
    ["آن", "او", "این", "اون", "ایشان", "آنها", "آن‌ها", "اینها", "این‌ها", "همین", "همان", "وی"]
)
# Function and question words: never a topic to carry.
_FA_FUNCTION_WORDS = (
    "از به با در بر برای که را رو و یا تا هم نیز است هست بود شد شده می کرد کرده دارد داره"
    " چه چی چیست چیه کی کیست کجا کجاست کدام کدوم چرا چگونه چطور چند چقدر آیا یک های ها"
    " ای بین پس اگر اما ولی چون خود"
)
_FA_STOP = _FA_BACK | frozenset(_FA_FUNCTION_WORDS.split())
# The pronouns that stand for a person or thing named before, never for the question's own words.
_FA_PERSONAL = frozenset(["آن", "او", "اون", "ایشان", "آنها", "آن‌ها", "وی"])
_FA_QUESTION_WORDS = frozenset(
    [
        "چه",
        "چی",
        "چیست",
        "چیه",
        "کی",
        "کیست",
        "کجا",
        "کجاست",
        "کدام",
        "کدوم",
        "چرا",
        "چگونه",
        "چطور",
        "چند",
        "چقدر",
        "آیا",
    ]
)
# The openings of `is_follow_up_fragment` that are prepositions, not "and"/"و": a whole
# question may start with them.
_PREPOSITION_START = re.compile(r"^(?:for|on|in|برای|روی|درباره|در مورد|اگر|اگه)\s")
# A word ending in the attached pronoun "ـش"/"‌اش" ("کارگردانش": its director).
_FA_ATTACHED = re.compile(rf"\S{{2,}}(?:{ZWNJ}?اش|[^\sا]ش)$")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|the|and|de|von|van|[A-Z][\w'’.-]*))*")
_QUOTED = re.compile(r"[\"“«]([^\"”»]{2,80})[\"”»]")
_LATIN = re.compile(r"[A-Za-z]")
_QUESTION_WORDS = frozenset(
    ["what", "who", "when", "where", "which", "why", "how", "is", "are", "do", "does", "did"]
)
_EN_PERSONAL = frozenset(["he", "him", "his", "she", "her", "hers"])
# "Who directed X?" asks for another person, whom only the answer names; "Who is X?" does not.
_ASKS_FOR_PERSON = re.compile(r"^\s*who\s+(?!is\b|was\b|are\b|were\b)\w", re.IGNORECASE)
_MARKER = re.compile(r"\[c\d+\]")
_CONNECTOR = re.compile(r"^(?:(?:of|the|and|de|von|van)\s+)+", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]{2,60})`")
_LINE_PREFIX = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+|\*\*|\|")


def is_dependent(question: str) -> bool:
    """The question leans on the conversation: a fragment ("and for contractors?"), a
    question with no content word at all ("why?"), or a pointer back with no subject of its
    own ("who stars in it?", "کارگردانش کیست؟"; not "Who directed Never Cry Wolf?", nor "how
    do I check an nft rules file without loading it", whose "it" points inside itself)."""
    if is_follow_up_fragment(question):
        return not _opens_with_preposition(question) or not _asks_with_own_terms(question)
    if not _terms_own(question):
        return bool(words(question))
    pointer = _pointer_back(question)
    if pointer is None or entities_own(question):
        return False
    # "آن"/"او" stand for the earlier topic itself, however long the question; the other
    # pointers ("it", "this", "این") as often point at the question's own words.
    return pointer in _FA_PERSONAL or len(_terms_own(question)) < OWN_SUBJECT_MIN_TERMS


def _pointer_back(question: str) -> str | None:
    tokens = [w.lower() for w in words(question)]
    for i, token in enumerate(tokens):
        if token in _EN_BACK or token in _FA_BACK:
            return token
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if token in _EN_DEMONSTRATIVES and (following is None or following not in STOP_WORDS):
            return token  # "after that", "that setting"; not "know that the upload worked"
    if len(tokens) <= 4:
        return next((t for t in tokens if _FA_ATTACHED.match(t)), None)
    return None


def _terms_own(question: str) -> list[str]:
    """The question's content words: what it is about when no pointer is counted."""
    pointers = _EN_BACK | _EN_DEMONSTRATIVES | _FA_BACK | _QUESTION_WORDS
    return [
        w
        for w in words(question)
        if len(w) > 2
        and not w.isdigit()
        and w.lower() not in pointers
        and w.lower() not in STOP_WORDS
        and w not in _FA_STOP
    ]


def _opens_with_preposition(question: str) -> bool:
    return _PREPOSITION_START.match(question.strip().lower()) is not None


def _asks_with_own_terms(question: str) -> bool:
    """ "In which file is the ssh port set?" asks a whole question; "for contractors?" and
    "in what year?" only narrow the one before."""
    tokens = {w.lower() for w in words(question)}
    asks = bool(tokens & (_QUESTION_WORDS | _FA_QUESTION_WORDS))
    return asks and len(_terms_own(question)) >= FRAGMENT_OWN_MIN_TERMS


def entities_own(question: str) -> list[str]:
    """Named things the question states itself: capitalised phrases after its first word,
    quoted titles, and Latin-script names inside Persian text."""
    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    persian = not _LATIN.search(question[:1]) and any("\u0600" <= ch <= "\u06ff" for ch in question)
    for match in _CAPITALISED.finditer(question):
        phrase = match.group(0).strip()
        first_word = match.start() == len(question) - len(question.lstrip())
        if phrase.lower() in _EN_BACK | _QUESTION_WORDS or phrase == "I":
            continue
        if first_word and not persian and " " not in phrase:
            continue  # a capital at the start is grammar, not a name
        found.append(phrase)
    return found


def terms_salient(text: str) -> list[str]:
    """What a question is about: its named phrases first, then its content words."""
    terms = [e for e in entities_own(text) if e.lower() not in _QUESTION_WORDS]
    named = {w.lower() for e in terms for w in words(e)}
    for word in words(text):
        token = word.lower()
        if token in named or token in STOP_WORDS or token in _FA_STOP or len(token) < 3:
            continue
        if token in _QUESTION_WORDS or token.isdigit():
            continue
        terms.append(word)
    return list(dict.fromkeys(terms))


def entities_answered(answer: str, *, asked: str) -> list[str]:
    """Names an answer states that its question did not, in order: code (`manage.py
    ingest`), quoted titles and capitalised phrases of two words or more. One capitalised
    word is too often a nationality or a month ("American") to be worth carrying."""
    text = _MARKER.sub("", answer)
    found = [m.group(1).strip() for m in _CODE.finditer(text)]
    for line in text.splitlines():
        for sentence in split_sentences(_LINE_PREFIX.sub(" ", line).replace("`", " ")):
            found.extend(_sentence_names(sentence.strip()))
    known = {w.lower() for w in words(asked)}
    names = (e.strip(" .,;:") for e in found)
    return list(
        dict.fromkeys(e for e in names if len(e) > 2 and not {w.lower() for w in words(e)} <= known)
    )


def _sentence_names(sentence: str) -> list[str]:
    names = []
    for name in entities_own(sentence):
        rest = name.partition(" ")[2]
        if sentence.startswith(name) and _CONNECTOR.match(rest):
            name = _CONNECTOR.sub("", rest)  # "See the Admin Audit": the sentence's own capital
        if len(words(name)) > 1:
            names.append(name)
    return names


def _exchanges(history: Sequence[HistoryMessage]) -> list[tuple[str, str]]:
    """(question, answer) pairs in order; an answer left blank is ""."""
    pairs: list[tuple[str, str]] = []
    for message in history:
        if message.role == "user":
            pairs.append((message.text, ""))
        elif pairs and not pairs[-1][1]:
            pairs[-1] = (pairs[-1][0], message.text)
    return pairs


def rewrite_offline(*, question: str, history: Sequence[HistoryMessage]) -> QueryRewrite | None:
    """The question plus the terms of the topic it follows, or None when it stands alone."""
    exchanges = _exchanges(history)
    if not exchanges or not is_dependent(question):
        return None
    own = {w.lower() for w in words(question)}
    asked: list[str] = []
    answered: list[str] = []
    person_named = False
    for earlier, answer in reversed(exchanges[-MAX_TOPIC_QUESTIONS:]):
        asked.extend(t for t in terms_salient(earlier) if t.lower() not in own)
        names = entities_answered(answer, asked=earlier)
        answered.extend(e for e in names if not {w.lower() for w in words(e)} <= own)
        person_named = person_named or _ASKS_FOR_PERSON.match(earlier) is not None
        if not is_dependent(earlier):
            break  # the question that opened the topic
    names = list(dict.fromkeys(answered))[:MAX_ANSWER_TERMS]
    terms = list(dict.fromkeys(asked))[: MAX_CARRIED_TERMS - len(names)]
    points_at_person = any(w.lower() in _EN_PERSONAL for w in words(question))
    ordered = names + terms if person_named and points_at_person else terms + names
    carried = list(dict.fromkeys(ordered))
    if not carried:
        return None
    return QueryRewrite(f"{question.strip()} {' '.join(carried)}", "rules", tuple(carried))


async def query_rewrite(
    *,
    question: str,
    history: Sequence[HistoryMessage],
    chat: ChatModel | None,
    timeout_s: float,
    max_tokens: int = 64,
) -> QueryRewrite | None:
    """The standalone query for a follow-up, or None for a question that stands alone."""
    if not any(m.role == "user" for m in history):
        return None
    # Only a question that leans on the conversation is rewritten, by the model as by the
    # rules: a small model asked about every turn rewrote standalone questions into the
    # previous topic (2 of 14 with SmolLM2-135M), which is the pollution to avoid.
    if not is_dependent(question):
        return None
    if chat is not None:
        rewritten = await _chat_rewrite(
            chat, question=question, history=history, timeout=timeout_s, max_tokens=max_tokens
        )
        if rewritten is not None:
            same = rewritten.casefold().strip(" ?؟.") == question.casefold().strip(" ?؟.")
            return None if same else QueryRewrite(rewritten, "chat")
    return rewrite_offline(question=question, history=history)


async def _chat_rewrite(
    chat: ChatModel,
    *,
    question: str,
    history: Sequence[HistoryMessage],
    timeout: float,
    max_tokens: int,
) -> str | None:
    lines = [f"{m.role}: {m.text[:300]}" for m in history]
    text = await chat_text(
        chat,
        system=REWRITE_PROMPT,
        user="\n".join([*lines, f"user (last question): {question}"]),
        timeout_s=timeout,
        max_tokens=max_tokens,
    )
    if not text:
        return None
    first = text.strip().splitlines()[0].strip().strip('"')
    return first[:300] or None
