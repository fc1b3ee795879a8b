"""What a query's wording says about its route, beside the router's intent.

The router tells a search from a question, but its search intent also takes questions worded
like keywords ("limit rsync bandwidth", "nft option to print the ruleset as JSON"). Only a
query that plainly asks for documents ("find documents about X", "search X", "list the pages
on X") is answered by the list alone; and a one- or two-word query that asks nothing
("settings") is too vague to answer or to chat about.
"""

from __future__ import annotations

import re

from apps.answers.routing.features import (
    asks_something,
    feature_text,
    is_follow_up_fragment,
    is_social,
    names_documents,
    wants_documents,
)
from apps.corpus.text import words

# On `feature_text`: case-folded, ZWNJ as a space ("فایل های"), "؟" as "?".
_EN_DOCUMENTS = (
    r"(?:documents?|docs|files|pages?|pdfs?|articles?|manuals?|sources?|reports?|sections?)"
)
_FA_DOCUMENTS = r"(?:اسناد|سند ?های|مستندات|مدارک|فایل ?های|صفحات|صفحه ?های|مقالات|منابع)"
# A document noun names what is asked for only with its topic after it ("documents about X",
# "the pages on X") or nothing at all: "find files modified today" is a how-to.
_EN_TOPIC = (
    r"(?:\s+(?:about|on|for|mentioning|regarding|concerning|related to"
    r"|that (?:mention|cover|discuss|describe))\b|\W*$)"
)
_DOCUMENT_REQUEST = re.compile(
    # "find documents about X", "list the pages on X", "show me the manuals for X"
    r"^(?:please |can you |could you )?(?:find|search(?: for)?|look for|list|show(?: me)?"
    rf"|get me|give me|pull up)\s+(?:\S+\s+){{0,3}}?{_EN_DOCUMENTS}{_EN_TOPIC}"
    r"|^(?:please )?search(?: for)?\s+\S"  # "search X": the verb is the request
    rf"|^(?:all |any )?{_EN_DOCUMENTS}{_EN_TOPIC}"
    # "اسناد مربوط به X", "همه فایل های مربوط به X را پیدا کن", "جستجوی X"
    rf"|{_FA_DOCUMENTS}\s+(?:مربوط به|درباره|در مورد|راجع به)\s"
    r"|^جستجو(?:ی)?\s"
)


def is_document_request(query: str) -> bool:
    """The query asks for documents to be found or listed, not for an answer."""
    normalized = feature_text(query)
    return _DOCUMENT_REQUEST.search(normalized) is not None or wants_documents(normalized)


def is_vague_query(query: str, *, max_words: int) -> bool:
    """At most `max_words` words that ask nothing: no question word or mark, no how-to, no
    greeting or thanks, no words to the assistant, no follow-up ("and for windows?") and no
    kind of document named."""
    if not 1 <= len(words(query)) <= max_words or is_follow_up_fragment(query):
        return False
    normalized = feature_text(query)
    if names_documents(normalized):  # "employee handbook": a document asked for by name
        return False
    return not asks_something(normalized) and not is_social(normalized)
