"""Names a question asks about that no passage mentions.

A technical question often names one exact thing: an option (`MaxSessions`), a product
(`WireGuard`, `YubiKey`), a module (`pam_faillock`), a service (`S3`, `IPv6`). When no passage
of the context mentions that name, the passages are about its neighbours and cannot answer:
the keyword leg would have brought in a passage holding so rare a term if the documents had
one. Only identifier-shaped words count, never plain words ("clutter", "bastion") a reader
may phrase differently from the documents: inner capitals, letters mixed with digits, or an
underscore, and names written as code: a command-line option (`--delete`, `-P`) or a crontab
nickname (`@reboot`). Words in capitals alone ("NFL", "TOTP") are left out, as are numbers
with a unit ("40mg", "2FA"): a document often spells an acronym out, or writes "40 mg".

Measured on the real-documents dev set (docs/benchmarks.md): it refused unanswerable
questions the evidence did not, and no answerable one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z0-9][\w.+]*[A-Za-z0-9]")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_LETTER, _DIGIT = re.compile(r"[A-Za-z]"), re.compile(r"\d")
# A number, or a number with its unit or ordinal ("40mg", "64GB", "34th", "2FA"): a passage
# writes those many ways ("40 mg"), so they are no name to look for.
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)*[A-Za-z]*")


def is_identifier(word: str) -> bool:
    """`MaxSessions`, `IPv6`, `S3`, `ssh_config`: a name written as code or a product is."""
    if _INNER_CAPITAL.search(word) or "_" in word.strip("_"):
        return True
    return bool(_LETTER.search(word) and _DIGIT.search(word) and not _QUANTITY.fullmatch(word))


# Written as code: a command-line option ("--delete", "-P"), a crontab nickname or a decorator
# ("@reboot"). Not a file name ("rsyncd.conf"): a passage on one of its entries need not
# repeat the name of the file it is in.
_CODE_NAME = re.compile(
    r"(?:^|(?<=[\s(\[\"`]))(?:--?[A-Za-z][\w-]*[A-Za-z0-9]|-[A-Za-z]|@[A-Za-z]\w+)(?![\w-])"
)


def question_identifiers(query: str) -> tuple[str, ...]:
    """The identifier-shaped words of the question (split at hyphens and slashes) and the
    names it writes as code."""
    words = (part for token in _WORD.findall(query) for part in re.split(r"[-/]", token))
    shaped = [word for word in words if word and is_identifier(word)]
    return tuple(dict.fromkeys([*_CODE_NAME.findall(query), *shaped]))


def unmentioned_identifiers(query: str, passages: Iterable[str]) -> tuple[str, ...]:
    """The question's identifiers that no passage holds as a word (case aside; a plural
    "APIs" counts as "API")."""
    names = question_identifiers(query)
    if not names:  # most questions: the passages are never read
        return ()
    text = "\n".join(passages).lower()
    return tuple(name for name in names if not _mentioned(name.lower(), text))


def _mentioned(name: str, text: str) -> bool:
    stem = name[:-1] if name.endswith("s") and len(name) > 3 else name
    return re.search(rf"(?<![\w]){re.escape(stem)}", text) is not None
