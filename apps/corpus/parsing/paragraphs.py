"""A page's lines made into paragraphs: the one joiner for a PDF's text layer and for a page
read by OCR, so a scanned copy is cut into the same blocks as its original.

Neither source marks paragraphs reliably (pypdf rarely emits blank lines, Tesseract's paragraph
numbers follow indentation), so a paragraph also ends after a short line that closes a
sentence. A word hyphenated over a line break is re-joined. Lines typed at a shell prompt
("$ tar -cvJf ...") are taken out of their paragraph as a code block, lines kept: joined into
the prose they would read as one run-on sentence.
"""

from __future__ import annotations

import re

from .blocks import PROMPT, collapse_whitespace

SENTENCE_END = (".", "!", "?", ":", "…", "؟")
SHORT_LINE_SHARE = 0.6
HYPHEN_BREAK = re.compile(r"(\w)([-\u00ad])\n(\w)")
_CONTINUED = ("\\", "|", "--", ">", "&&")


def split_page_text(text: str) -> list[str]:
    """Paragraphs of one page's text, hyphenated line breaks re-joined."""
    joined = (_join_lines(group) for group in _line_groups(text))
    return [paragraph for paragraph in joined if paragraph]


def page_blocks(text: str) -> list[tuple[str, bool]]:
    """`split_page_text`'s paragraphs as (text, is_code), each run of prompted lines apart."""
    found: list[tuple[str, bool]] = []
    for group in _line_groups(text):
        for code, run in _prompt_runs(group):
            paragraph = "\n".join(run) if code else _join_lines(run)
            if paragraph:
                found.append((paragraph, code))
    return found


def _line_groups(text: str) -> list[list[str]]:
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    longest = max((len(line) for line in lines), default=0)
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        if not line or _ends_paragraph(line, longest):
            paragraphs.append([])
    return [group for group in paragraphs if group]


def _prompt_runs(lines: list[str]) -> list[tuple[bool, list[str]]]:
    """The lines in runs: (True, prompted lines) and (False, the others), in order."""
    runs: list[tuple[bool, list[str]]] = []
    for line in lines:
        # A command broken over lines goes on where its line ends in "\\", "|", "--" or ">".
        continued = bool(runs and runs[-1][0] and runs[-1][1][-1].endswith(_CONTINUED))
        code = bool(PROMPT.match(line)) or continued
        if runs and runs[-1][0] == code:
            runs[-1][1].append(line)
        else:
            runs.append((code, [line]))
    return runs


def _ends_paragraph(line: str, longest: int) -> bool:
    return line.endswith(SENTENCE_END) and len(line) < SHORT_LINE_SHARE * longest


def _join_lines(lines: list[str]) -> str:
    text = HYPHEN_BREAK.sub(_rejoin_hyphen, "\n".join(lines))
    return collapse_whitespace(text)


def _rejoin_hyphen(match: re.Match[str]) -> str:
    before, hyphen, after = match.groups()
    if hyphen == "\u00ad" or after.islower():
        return before + after  # "infor-\nmation" -> "information"
    return before + hyphen + after  # "COVID-\n19" keeps its hyphen
