"""The lines of a chunk as the source wrote them: prose, bulleted items, numbered steps, table rows.

Chunking writes a list item as "- item", a numbered step as "2. step" and a table row as
"| a | b |" (the header row followed by a "|---|" rule), each on its own line. Reading those
lines back lets the composer answer with a list where the source has one, and never paste a
table row, pipes and all, into a sentence.

Also here: the sentences that never answer a question, whatever it is (a quoted question,
a heading, a pointer to another page), so the composer can leave them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PROSE, ITEM, STEP, ROW = "prose", "item", "step", "row"

_RULE = re.compile(r"^\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$")
_ITEM_LEAD = re.compile(r"^[-*•·▪]\s+")
_STEP_LEAD = re.compile(r"^\d{1,2}[.)]\s+")
_INLINE_MARKUP = re.compile(r"\*\*|__|`")
_CELL_END = re.compile(r"[.;:،؛]+$")
_STRAY_PIPE = re.compile(r"\s*\|\s*")
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06FF]")


@dataclass(frozen=True)
class Line:
    kind: str  # PROSE, ITEM, STEP or ROW
    text: str  # without its lead; a row reads "first cell: the other cells"
    intro: bool = False  # prose ending in ":" right before a list or table: it announces it
    # What the line is about beyond its own words: a row's column names ("Status, Meaning"),
    # the items an intro announces. Matched against the question, never shown.
    context: str = ""


def chunk_lines(text: str) -> list[Line]:
    """The chunk's lines with their kinds; header rows and rules are left out."""
    raw = [line.strip() for line in text.split("\n")]
    found: list[Line] = []
    header = ""
    for index, line in enumerate(raw):
        following = raw[index + 1] if index + 1 < len(raw) else ""
        if not line or _RULE.match(line) or line.startswith("#"):
            continue  # a rule, or a heading: neither answers anything
        if line.startswith("|"):
            if _RULE.match(following):  # a header row names the columns, it says nothing
                header = ", ".join(_cells(line))
            else:
                found.append(Line(ROW, row_prose(line), context=header))
        elif _ITEM_LEAD.match(line):
            found.append(Line(ITEM, clean_markup(_ITEM_LEAD.sub("", line))))
        elif _STEP_LEAD.match(line):
            found.append(Line(STEP, clean_markup(_STEP_LEAD.sub("", line))))
        else:
            announces = line.endswith(":") and _is_structured(following)
            # A table's rows carry their own header; a list's items are what its intro means.
            listed = (
                _listed(raw[index + 1 :]) if announces and not following.startswith("|") else ""
            )
            found.append(Line(PROSE, clean_markup(line), intro=announces, context=listed))
    return found


def _listed(lines: list[str]) -> str:
    """The text of the list that starts the given lines."""
    run = []
    for line in lines:
        if not _is_structured(line):
            break
        run.append(_lead_cut(line))
    return " ".join(run)


def _lead_cut(line: str) -> str:
    return clean_markup(_STEP_LEAD.sub("", _ITEM_LEAD.sub("", line)))


def _is_structured(line: str) -> bool:
    return bool(line.startswith("|") or _ITEM_LEAD.match(line) or _STEP_LEAD.match(line))


def row_prose(row: str) -> str:
    """ "| failed | Ingestion stopped. |" -> "failed: Ingestion stopped." (no pipes left)."""
    cells = _cells(row)
    if len(cells) < 2:
        return cells[0] if cells else ""
    rest = [_CELL_END.sub("", cell) for cell in cells[1:-1]] + [cells[-1]]
    comma = "، " if _ARABIC_SCRIPT.search(row) else ", "
    return f"{_CELL_END.sub('', cells[0])}: {comma.join(rest)}"


def _cells(row: str) -> list[str]:
    cells = [clean_markup(cell) for cell in row.strip().strip("|").split("|")]
    return [cell for cell in cells if cell]


def clean_markup(text: str) -> str:
    """Emphasis and code marks dropped, a stray pipe read as a comma: the chat page renders
    the answer as markdown, where a quoted "**" or "|" becomes formatting the source never had."""
    return _STRAY_PIPE.sub(", ", _INLINE_MARKUP.sub("", text)).strip(" ,")


# Ending in a quoted question: one quoted mid-sentence ('A follow-up ("who stars in it?") was
# rewritten ...') is an example inside a statement, which answers like any other.
_QUOTED_QUESTION = re.compile(r"[?؟]\s*[\"'”’»)]+[.:]?$")
# A table of contents, or a bare chapter heading ("Chapter 2: Using APT on both machines"): a
# PDF's or HTML page's navigation text read as a sentence, which names topics and says nothing.
_CONTENTS = re.compile(
    r"\btable\s+of\s+contents\b|فهرست\s+(?:مطالب|مندرجات)|(?:\.\s?){4,}\d+$", re.I
)
_CHAPTER = re.compile(
    r"^(?:chapter|part|appendix|section|فصل|بخش|پیوست)\s+(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])[.:]?\s",
    re.IGNORECASE,
)
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)+\.?\s")
_VERB_STOP = re.compile(r"[.!?؟]$")
HEADING_WORDS = 10  # a numbered label with more words than this reads as a sentence
_SELF_REFERENCE = re.compile(
    r"^(?:see|read)\s|^(?:this|the following|the next)\s+(?:page|section|guide|chapter|part)\b"
    r"|^(?:این|در\s+این)\s+(?:بخش|صفحه|راهنما|فصل)|^(?:ببینید|نگاه\s+کنید)",
    re.IGNORECASE,
)


# "Document search: 05-search.": a label and the name of another page, nothing else.
_POINTER = re.compile(r"^[^.:]{1,80}:\s*(?:\S*\d\S*-\S+|\S+\.(?:md|html?|pdf|docx|txt))\.?$")


def never_answers(sentence: str) -> bool:
    """A question (asked or quoted), a pointer to another page, a table of contents or a bare
    heading."""
    if sentence.endswith(("?", "؟")) or _QUOTED_QUESTION.search(sentence):
        return True
    if _SELF_REFERENCE.search(sentence) or _POINTER.match(sentence):
        return True
    return sentence.startswith("#") or _CONTENTS.search(sentence) is not None or _heading(sentence)


def _heading(sentence: str) -> bool:
    """ "Chapter 4. The Interface", "9.6.2. Disk partition configuration": a numbered label and
    a short title with no stop of its own."""
    numbered = _CHAPTER.match(sentence) or _SECTION_NUMBER.match(sentence)
    if not numbered:
        return False
    title = sentence[numbered.end() :]
    return len(title.split()) <= HEADING_WORDS and not _VERB_STOP.search(title)
