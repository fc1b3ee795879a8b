"""The lines of a chunk as the source wrote them: prose, bulleted items, numbered steps, table
rows, code blocks.

Chunking writes a list item as "- item", a numbered step as "2. step" and a table row as
"| a | b |" (the header row followed by a "|---|" rule), each on its own line. Reading those
lines back lets the composer answer with a list where the source has one, and never paste a
table row, pipes and all, into a sentence. A fenced code block (chunking writes every code
block fenced) is one CODE line holding all its lines, quoted whole and as written; a row
keeps its table's header, so it can be quoted under it.

Also here: the sentences that never answer a question, whatever it is (a quoted question,
a heading, a pointer to another page), so the composer can leave them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.corpus.text import split_sentences

PROSE, ITEM, STEP, ROW, CODE = "prose", "item", "step", "row", "code"

_RULE = re.compile(r"^\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$")
_ITEM_LEAD = re.compile(r"^[-*•·▪]\s+")
_STEP_LEAD = re.compile(r"^\d{1,2}[.)]\s+")
_INLINE_MARKUP = re.compile(r"\*\*|__|`")
_CELL_END = re.compile(r"[.;:،؛]+$")
_STRAY_PIPE = re.compile(r"\s*\|\s*")
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06FF]")
_FENCE = re.compile(r"^(`{3,}|~{3,})")


@dataclass(frozen=True)
class Line:
    kind: str  # PROSE, ITEM, STEP, ROW or CODE
    text: str  # without its lead; a row reads "first cell: the other cells"; code as written
    intro: bool = False  # ends in ":" right before what it announces: a list, a table, code
    # What the line is about beyond its own words: a row's column names ("Status, Meaning"),
    # the items an intro announces. Matched against the question, never shown.
    context: str = ""
    # The source's own form, for quoting as is: a code block's lines; a row under its table's
    # header ("| a | b |", "|---|---|", the row), or the bare row when the chunk has no header.
    quoted: str = ""


def chunk_lines(text: str) -> list[Line]:
    """The chunk's lines with their kinds; header rows and rules are left out."""
    written = text.split("\n")
    raw = [line.strip() for line in written]
    found: list[Line] = []
    header = ""
    header_row = ""
    fence_end = -1  # the closing fence of the code block being read
    for index, line in enumerate(raw):
        following = raw[index + 1] if index + 1 < len(raw) else ""
        if index <= fence_end:
            continue  # inside a code block, read whole at its opening fence
        if _FENCE.match(line):
            fence_end = _fence_end(raw, index)
            code = "\n".join(written[index + 1 : fence_end])
            # What the block is about: the sentence that announces it, when one does.
            intro = split_sentences(found[-1].text)[-1] if found and found[-1].intro else ""
            found.append(Line(CODE, code, context=intro, quoted=code))
            continue
        if not line or _RULE.match(line) or line.startswith("#"):
            continue  # a rule, or a heading: neither answers anything
        if line.startswith("|"):
            if _RULE.match(following):  # a header row names the columns, it says nothing
                header = ", ".join(_cells(line))
                header_row = _table_row(_cells(line))
            else:
                row = _table_row(_cells(line))
                quoted = f"{header_row}\n{_table_rule(header_row)}\n{row}" if header_row else row
                found.append(Line(ROW, row_prose(line), context=header, quoted=quoted))
        elif _ITEM_LEAD.match(line) or _STEP_LEAD.match(line):
            kind, lead = (ITEM, _ITEM_LEAD) if _ITEM_LEAD.match(line) else (STEP, _STEP_LEAD)
            # An item can announce a block too ("- To restore it, add this line to the
            # sudoers file:" over the line to add): the block goes with it.
            announces = line.endswith(":") and _FENCE.match(following) is not None
            found.append(Line(kind, clean_markup(lead.sub("", line)), intro=announces))
        else:
            announces = line.endswith(":") and _is_structured(following)
            # A table's rows carry their own header; a list's items are what its intro means.
            listed = (
                _listed(raw[index + 1 :]) if announces and not following.startswith("|") else ""
            )
            found.append(Line(PROSE, clean_markup(line), intro=announces, context=listed))
    return found


def _fence_end(raw: list[str], start: int) -> int:
    """The line of the fence that closes the block opened at `start` (or the chunk's end)."""
    fence = _FENCE.match(raw[start])
    mark = fence.group(1) if fence else "```"
    for index in range(start + 1, len(raw)):
        if raw[index].startswith(mark) and not raw[index].strip(mark[0]):
            return index
    return len(raw)


def _table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table_rule(row: str) -> str:
    return "|" + "---|" * row.count(" | ") + "---|"


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
    return bool(
        line.startswith("|")
        or _ITEM_LEAD.match(line)
        or _STEP_LEAD.match(line)
        or _FENCE.match(line)
    )


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
