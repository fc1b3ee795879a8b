"""A document's front matter: the banner a manual page prints on its first line ("NFT(8) NFT(8)
NAME nft - ...", "SSH_CONFIG(5) BSD File Formats Manual"), and copyright and licence notices.

Such text holds the document's own name and its subject's words, so it matches almost every
question about the document and answers none of them: over Debian's manual pages it was chosen
as the answer for "which logrotate directive skips empty logs?" and "how do I check an nft
rules file?". It is left out of the candidates unless the question is about the document
itself (its licence, copyright or authors).
"""

from __future__ import annotations

import re

# A manual page's header: "LOGROTATE(8) System Administrator's Manual LOGROTATE(8)", the
# name and section printed again at both ends of the line.
_BANNER = re.compile(r"^\s*([A-Z][A-Z0-9_.+-]*)\(\d\w*\)\s.*?\b\1\(\d\w*\)", re.DOTALL)
# A notice, not prose about copyright ("the copyright of the song passed to his label", "from
# the play (Copyright 1931, ...)"): a notice opening the sentence or a sign after "Copyright",
# a licence named after "licensed under".
_NOTICE = re.compile(
    r"(?:^|[-–—]\s*)copyright\s+(?:©|\(c\)|\d{4})|\bcopyright\s+(?:©|\(c\))|©\s*\d{4}"
    r"|\ball\s+rights\s+reserved\b"
    r"|\blicen[cs]ed\s+under\s+(?:the\s+)?(?:terms\s+of\s+the\s+)?(?:gnu|gpl|lgpl|creative"
    r"|cc\b|mit\b|bsd\b|apache|mozilla|open\s+publication)"
    r"|\bgnu\s+(?:general|lesser|free\s+documentation)\s+(?:public\s+)?licen[cs]e\b"
    r"|\bfree\s+software;?\s+you\s+can\s+redistribute\b|\blicen[cs]e\s+notice\b"
    r"|\bwithout\s+any\s+warranty\b",
    re.IGNORECASE,
)
_ASKS_ABOUT_DOCUMENT = re.compile(
    r"\b(?:licen[cs]e[sd]?|copyright|copyleft|authors?|wrote|written\s+by|redistribut\w*|gpl"
    r"|warranty)\b|(?:^|\s)(?:مجوز|حق\s+نشر|نویسنده|کپی\s*رایت)(?=\s|$|[?؟])",
    re.IGNORECASE,
)


def is_front_matter(sentence: str) -> bool:
    """A manual page's banner line, or a copyright or licence notice."""
    return bool(_BANNER.match(sentence) or _NOTICE.search(sentence))


def asks_about_document(query: str) -> bool:
    """The question asks about the document itself: its licence, copyright or authors."""
    return bool(_ASKS_ABOUT_DOCUMENT.search(query))
